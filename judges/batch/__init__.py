"""Judge runs through the providers' batch services (half price, results within 24 hours).

``calibrate judge run --batch`` calls :func:`run_judge_batch`: the run's uncached calls go to
Anthropic's Message Batches API or OpenAI's Batch API in provider-sized batches, each recorded
before it is sent (:mod:`judges.stores.batch_store`), polled with backoff, and collected into the
same
``judge_calls`` rows an online run writes (:mod:`judges.batch.runner`). The provider adapters are
:mod:`judges.batch.anthropic` and :mod:`judges.batch.openai` behind :mod:`judges.batch.api`.
"""

from judges.batch.api import BATCH_DISCOUNT, BatchUnsupportedError, has_batch_api
from judges.batch.runner import (
    BatchPolling,
    BatchRunSummary,
    batch_price,
    describe_batch_cost,
    run_judge_batch,
    run_judge_batch_async,
)
from judges.batch.services import batch_api
from judges.stores.batch_store import BatchStore

__all__ = [
    "BATCH_DISCOUNT", "BatchPolling", "BatchRunSummary", "BatchStore", "BatchUnsupportedError",
    "batch_api", "batch_price", "describe_batch_cost", "has_batch_api", "run_judge_batch",
    "run_judge_batch_async",
]
