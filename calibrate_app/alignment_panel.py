"""The Judges page's dev/test panel: dev disagreements, "Propose a revision", explicit adoption.

The page calls :func:`held_out_ids` to keep test rows out of its row-by-row views, and
:func:`render` at its foot. The panel shows the split and the test-set use; behind a toggle,
the judge's disagreements with the experts on **dev** rows, and a button that asks a proposer
model (in a background job, like a judge run) for a revision, runs it against the current one
on dev and test, and shows the diff, the disagreements it addresses and the test numbers. The
owner adopts it explicitly. Row text, notes, diffs and numbers go through ``st.code`` /
``st.dataframe`` / escaped captions only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from calibrate_app import resources, widgets
from judges.workflows import align
from judges.workspace import Workspace
from labels.errors import CalibrateError

if TYPE_CHECKING:
    from judges.workflows.align import JudgeConfig

JOB_PREFIX = "align:"
DEFAULT_PROPOSER = "scripted/proposer"


def held_out_ids(workspace: Workspace, dataset: str, criterion: str) -> set[str]:
    """The test rows of ``dataset``/``criterion`` (making the split, assigning new labels)."""
    return align.held_out_ids(workspace, dataset, criterion)


def _job_key(config: JudgeConfig, dataset: str) -> str:
    return f"{JOB_PREFIX}{config.config_id}:{dataset}"


def _start(workspace: Workspace, dataset: str, config: JudgeConfig, proposer: str) -> None:
    settings = resources.get_settings()
    problem = align.provider_problem(proposer, config.model, settings=settings)
    if problem is not None:
        widgets.message("error", problem, icon=":material/key_off:")
        return

    def work(job: resources.BackgroundJob) -> align.AlignOutcome:
        def progress(done: int, message: str) -> None:
            if done == 0:
                job.advance(0, total=align.PROPOSE_STEPS, message=message)
            else:
                job.advance(done, message=message)

        return align.propose(workspace, dataset, config, proposer=proposer, settings=settings,
                             context="app", progress=progress)

    resources.get_jobs().start(_job_key(config, dataset), f"Proposal for {config.label}", work)


def _disagreements(workspace: Workspace, dataset: str, config: JudgeConfig) -> None:
    view = align.dev_disagreements(workspace, dataset, config)
    st.caption(widgets.escape_markdown(
        f"{len(view.disagreements)} disagreements on {view.n_compared} dev rows where both the "
        f"experts and this revision gave pass or fail ({view.n_dev} dev rows labelled)."))
    if view.disagreements:
        st.dataframe(pd.DataFrame([{
            "item_id": d.item_id, "experts": d.human, "judge": d.judge,
            "failure tags": ", ".join(d.failure_tags), "notes": d.note,
            "judge's reasoning": d.reasoning or "",
        } for d in view.disagreements]), hide_index=True, key="align_disagreements")


def _outcome(workspace: Workspace, dataset: str, config: JudgeConfig) -> None:
    """The proposal job: its progress while it runs (polled), then the result (still).

    Polled only while the job runs: a polling rerun every second would close a dropdown the
    user has open elsewhere on the page (the Judges page's row details, for instance).
    """
    job = resources.get_jobs().get(_job_key(config, dataset))
    if job is None:
        return
    if job.running:
        _live_progress(_job_key(config, dataset))
        return
    if job.error:
        st.code(job.error, language=None, wrap_lines=True)
        return
    if not isinstance(job.result, align.AlignOutcome):
        return
    proposal, result = job.result.proposal, job.result.result
    st.code("\n".join(proposal.describe()), language=None, wrap_lines=True)
    st.code(proposal.diff, language="diff", wrap_lines=True)
    st.code("\n".join(result.describe()), language=None, wrap_lines=True)
    for who, spec in (("judge", config.model), ("proposer", proposal.proposer)):
        if spec.startswith("scripted/"):
            widgets.message("warning", f"Stand-in: the {who} ({spec}) is the scripted "
                            "provider, not a model.")
    if align.adopted(workspace, dataset, config.criterion,
                     config.name) == proposal.config.config_id:
        widgets.message("success", f"Adopted {proposal.config.label}.")
    elif st.button(f"Adopt {proposal.config.label}", key="align_adopt",
                   icon=":material/check_circle:",
                   help="Nothing is adopted automatically. Adopting makes it the current "
                   "revision for the next proposal."):
        align.adopt(workspace, proposal.proposal_id)
        widgets.message("success", f"Adopted {proposal.config.label}.")


@st.fragment(run_every=1.0)
def _live_progress(key: str) -> None:
    """The running proposal's progress; once it ends, one full rerun shows its result."""
    job = resources.get_jobs().get(key)
    if job is None or not job.running:
        st.rerun()
        return
    st.progress(min(job.done / align.PROPOSE_STEPS, 1.0), text=widgets.escape_markdown(job.message))


def render(workspace: Workspace, dataset: str, config: JudgeConfig, *,
           unsaved: bool = False) -> None:
    """The panel (see the module docstring).

    ``unsaved``: ``config`` holds edits not saved as a revision; a proposal runs it and stores
    its verdicts, so proposing waits for "Save as…" (nothing on the page saves implicitly).
    """
    st.subheader("Dev rows and proposals")
    if config.kind != "pointwise":
        st.caption("Proposals tune pointwise judges.")
        return
    try:
        view = align.split(workspace, dataset, config.criterion)
    except CalibrateError as error:
        widgets.message("info", str(error))
        return
    st.caption(widgets.escape_markdown(
        f"{view.split.describe()}. Tuning views show dev rows only; the test set has been used "
        f"by {view.revisions} revisions."))
    if view.warning:
        widgets.message("warning", view.warning)
    if not st.toggle("Show dev disagreements and propose a revision", key="align_open"):
        return
    _disagreements(workspace, dataset, config)
    proposer = st.text_input("Proposer model", value=DEFAULT_PROPOSER, key="align_proposer",
                             help="Any configured provider/model; scripted/... and local/... "
                             "work offline.")
    if unsaved:
        st.caption("A proposal runs this config and stores its verdicts: save the edits "
                   "(“Save as…”) first.")
    if st.button("Propose a revision", key="align_propose", icon=":material/auto_fix_high:",
                 disabled=unsaved):
        _start(workspace, dataset, config, proposer.strip())
    _outcome(workspace, dataset, config)


__all__ = ["held_out_ids", "render"]
