"""Real pairwise data (MT-Bench CC BY, RAGChecker Apache-2.0, LLMBar MIT), read in place.

``bench/real_pairwise.py`` draws 1,000 label subsamples per cell and prints the coverage of the
full human answer; here one seeded subsample per set and queue must cover it, through the same
loaders and the same real path. The files live in ``../shared/data/external`` (never copied
into the repository); each set is skipped when absent.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import numpy as np
import pytest
from repo_paths import REPO, SHARED_DATA

EXTERNAL = SHARED_DATA / "external"


@pytest.fixture(scope="module")
def real() -> ModuleType:
    spec = importlib.util.spec_from_file_location("real_pairwise",
                                                  REPO / "bench" / "real_pairwise.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("loader", "m"), [("load_mtbench", 120), ("load_ragchecker", 60),
                                           ("load_llmbar", 60)])
def test_one_seeded_label_subsample_covers_the_full_human_answer(
    real: ModuleType, loader: str, m: int
) -> None:
    data = getattr(real, loader)(EXTERNAL)
    if data is None:
        pytest.skip(f"{loader}: shared data not present under {EXTERNAL}")
    for queue, design in (("random", "same_run_random"), ("stratified", "same_run_stratified")):
        labelled = real.draw(np.random.default_rng(1), data, m, queue)
        answer = real.same_run_answer(data, labelled, queue)
        assert answer.decision.design == design
        for k, side in enumerate(("a", "b", "tie")):
            share = answer.headline.shares()[side]
            assert share.covers(float(data.truth[k])), (loader, queue, side, share.format())
