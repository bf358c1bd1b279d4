"""Judges page: the prompt-tuning loop.

Pick a judge config (a built-in template or a saved revision) and a model (the providers with a
key set, local servers, the scripted stand-in), edit the config as YAML with a live preview of the
rendered prompt for a chosen row, see validation errors inline, try it on a few labelled rows
(in memory: nothing is stored), save it as a named revision only when asked ("Save as…"), check
the cost estimate, run a saved revision in the background (the progress survives page changes:
the job lives in the server process), browse per-row results, and compare the revisions'
agreement with the experts side by side.

Nothing is saved implicitly: editing the YAML or picking a model changes only this tab's
editor, a try stores no config, run, call or verdict, and a full run needs a saved revision.

Everything here calls the same workflow as the CLI (:mod:`judges.workflows.judging`: configs,
plans, tries, runs and their verdicts) and the same library (``judges.config``,
``judges.reporting``). Row text, rendered prompts, judge reasoning and raw replies are
untrusted: they go through ``st.code``/``st.text``/``st.dataframe`` only, never markdown or a
widget label.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from calibrate_app import access, alignment_panel, resources, state, widgets
from judges.config import ConfigError, JudgeConfig, config_from_text
from judges.providers import STAND_IN_NOTE, ProviderConfigError, get_provider, is_stand_in
from judges.trial import MAX_TRIAL_ROWS, Trial
from judges.workflows import judging
from judges.workflows.judging import (
    CallPolicy,
    NoLabelledRowsError,
    Order,
    RenderError,
    RunSummary,
    swap_flips,
)
from judges.workspace import Workspace
from labels.errors import CalibrateError

JOB_PREFIX = "judge:"
EDIT_PREFIX = "judge_yaml_"
DISCARD_ASKED = "judge_discard_asked"
CONFIG_KEY = "judge_config"
MODEL_KEY = "judge_model"
SAVE_NAME = "judge_save_name"
TRIAL = "judge_trial"
TRY_ROWS = 5
TRY_POLICY = CallPolicy(timeout=30.0, max_retries=2)
"""A try waits for its calls (the page is busy meanwhile): shorter than a run's 60 s and 4."""


def _job_key(config: JudgeConfig, dataset: str) -> str:
    # judge:<config id>:<dataset> — config ids ("b2:<hex>") hold exactly one colon.
    return f"{JOB_PREFIX}{config.config_id}:{dataset}"


def _job_dataset(key: str) -> str:
    return key.split(":", 3)[3]


class _JobFlag:
    """The runner's stop flag, read from an app background job."""

    def __init__(self, job: resources.BackgroundJob) -> None:
        self._job = job

    def is_set(self) -> bool:
        return self._job.cancelled


def _editor(base: JudgeConfig) -> tuple[JudgeConfig | None, str]:
    """The YAML editor for ``base``; returns the parsed config (or None) and the text.

    Unsaved edits are kept (per config) across page switches and config changes in this tab;
    discarding them asks first.
    """
    key = state.keep(f"{EDIT_PREFIX}{base.config_id}")
    saved = base.to_yaml()
    text = st.text_area(
        "Config (YAML)", value=saved, height=420, key=key,
        help="Everything that decides a verdict: model, prompts, output contract, verdicts, "
        "generation parameters. Any change gives a new config id.",
    )
    if text != saved:
        _unsaved(key)
    try:
        return config_from_text(text, source="the edited config"), text
    except ConfigError as error:
        st.error("The config is not valid; fix the fields below.", icon=":material/error:")
        st.code(str(error), language=None, wrap_lines=True)
        return None, text


def _discard(key: str) -> None:
    state.clear_widget(key)
    state.clear_widget(DISCARD_ASKED)


def _unsaved(key: str) -> None:
    """Say that the editor holds unsaved edits, and discard them only after a second click."""
    with st.container(border=True, key="judge_unsaved"):
        st.caption("Unsaved edits: kept in this tab while you switch pages or configs; "
                   "“Save as…” keeps them for good as a named revision.")
        if state.widget_value(DISCARD_ASKED) != key:
            st.button("Discard edits", key="judge_discard", icon=":material/delete:",
                      on_click=state.set_value, args=(DISCARD_ASKED, key))
            return
        st.warning("Discard your edits to this config? This cannot be undone.",
                   icon=":material/warning:")
        cols = st.columns(2)
        cols[0].button("Yes, discard them", key="judge_discard_yes", type="primary",
                       on_click=_discard, args=(key,))
        cols[1].button("Keep editing", key="judge_discard_no",
                       on_click=state.clear_widget, args=(DISCARD_ASKED,))


def _with_model(text: str, spec: str) -> str:
    """The YAML ``text`` with its ``model`` set to ``spec`` (``text`` when it does not parse)."""
    try:
        config = config_from_text(text)
    except ConfigError:
        return text
    return config.model_copy(update={"model": spec}).to_yaml()


def _apply_model(editor_key: str, saved: str) -> None:
    """Write the picked model into the editor (an unsaved edit like any other)."""
    spec = state.widget_value(MODEL_KEY)
    if isinstance(spec, str):
        state.set_value(editor_key, _with_model(state.widget_value(editor_key, saved), spec))


def _model_picker(editor_key: str, saved: str, config: JudgeConfig | None) -> None:
    """The model picker: providers with a key, local servers, the scripted stand-in.

    Picking a model writes it into the YAML editor (an unsaved edit): nothing is stored.
    Keys are never read here, only whether one is set (:func:`judges.workflows.judging.models`).
    """
    if config is None:
        st.selectbox("Model", ["(fix the config first)"], disabled=True, key="judge_model_off")
        return
    choices = {c.spec: c for c in judging.models(resources.get_settings(), current=config.model)}
    if state.widget_value(MODEL_KEY) != config.model:
        state.clear_widget(MODEL_KEY)  # follow a model typed into the YAML
    specs = list(choices)
    st.selectbox(
        "Model", specs, index=specs.index(config.model), key=MODEL_KEY,
        format_func=lambda spec: choices[spec].label if spec in choices else spec,
        on_change=_apply_model, args=(editor_key, saved), accept_new_options=True,
        help="Providers whose API key is set, configured local servers, and the scripted "
        "stand-in (no model: it decides by word overlap and only tests the plumbing). Type "
        "another provider/model to use it. Picking one edits the config below; nothing is "
        "saved until “Save as…”.",
    )
    if choices[config.model].stand_in:
        st.caption("Scripted stand-in: not a model. Its verdicts test the plumbing and say "
                   "nothing about a judge.")


def _saved_label(workspace: Workspace, config: JudgeConfig) -> str | None:
    """The config picker's label of ``config`` when it is one of its choices."""
    for label, choice in judging.config_choices(workspace).items():
        if choice.config_id == config.config_id:
            return label
    return None


def _save(editor_key: str, base: JudgeConfig) -> None:
    """Save the editor's config under the name typed (a callback: reads the tab's state)."""
    workspace = resources.get_workspace()
    name = str(state.widget_value(SAVE_NAME) or "").strip()
    try:
        edited = config_from_text(state.widget_value(editor_key, base.to_yaml()),
                                  source="the edited config")
        config = judging.as_revision(workspace, edited, base, name=name or None)
    except ConfigError as error:
        state.flash("error", f"Not saved: {error}")
        return
    if judging.save_config(workspace, config):
        state.flash("success", f"Saved {config.label}.")
    else:
        state.flash("info", f"Nothing new to save: this is the saved {config.label}.")
    label = _saved_label(workspace, config)
    if label is not None:  # open the saved revision; the edits now live in it
        state.set_value(CONFIG_KEY, label)
        state.clear_widget(editor_key)
        state.clear_widget(SAVE_NAME)


def _save_as(workspace: Workspace, editor_key: str, base: JudgeConfig,
             config: JudgeConfig) -> tuple[JudgeConfig, bool]:
    """Say whether the editor holds a saved revision, and offer "Save as…" when it does not.

    Returns:
        The config to use below (the saved revision when the edits match one) and whether it
        is unsaved (then a full run is disabled: its verdicts need a saved revision).
    """
    if config.config_id == base.config_id:
        return config, False
    numbered = judging.as_revision(workspace, config, base)
    if numbered.config_id in judging.saved_config_ids(workspace):
        st.caption(f"Edited: this is the saved {widgets.escape_markdown(numbered.label)}.")
        return numbered, False
    st.caption("Edited, not saved: trying it saves nothing; a full run needs a saved "
               "revision.")
    with st.popover("Save as…", icon=":material/save:"):
        st.text_input("Name", value=config.name, key=SAVE_NAME, max_chars=64,
                      help="Lowercase letters, digits, '.', '_' or '-'. The same name gets the "
                      "next revision number; a new name starts at revision 1.")
        st.button("Save revision", key="judge_save", type="primary", icon=":material/save:",
                  on_click=_save, args=(editor_key, base))
    return config, True


def _try(workspace: Workspace, dataset: str, config: JudgeConfig, held_out: set[str]) -> None:
    """"Try on N rows": judge a few labelled dev rows in memory and show them beside the experts'.

    Nothing is stored (:func:`judges.trial.try_judge`); the result stays in this tab only, and
    only while the config is the one tried.
    """
    st.subheader("Try on a few rows")
    cols = st.columns([1, 3], vertical_alignment="bottom")
    n = int(cols[0].number_input("Rows", 1, MAX_TRIAL_ROWS, TRY_ROWS,
                                 key=state.keep("judge_try_rows")))
    clicked = cols[1].button(
        f"Try on {n} rows", key="judge_try", icon=":material/science:",
        help="Judges up to this many rows the experts labelled (dev rows only, both verdicts "
        "alternating) with the config as it is in the editor, and shows the verdicts beside "
        "the experts'. Saves nothing: no revision, call or verdict is stored.")
    if clicked:
        try:
            provider = get_provider(config.model, settings=resources.get_settings())
        except ProviderConfigError as error:
            widgets.message("error", str(error), icon=":material/key_off:")
            return
        try:
            ids = judging.trial_rows(workspace, dataset, config, n, exclude=held_out)
            with st.spinner(f"Judging {len(ids)} rows…"):
                trial = judging.try_config(workspace, config, dataset, ids, provider=provider,
                                           policy=TRY_POLICY)
        except CalibrateError as error:
            st.warning("This try cannot start:")
            st.code(str(error), language=None, wrap_lines=True)
            return
        state.set_value(TRIAL, trial)
    trial = state.widget_value(TRIAL)
    if not isinstance(trial, Trial) or trial.dataset != dataset:
        return
    if trial.config.config_id != config.config_id:
        st.caption("The last try was of another version of this config; try again to see "
                   "this one.")
        return
    _trial_result(trial)


def _trial_result(trial: Trial) -> None:
    """The tried rows beside the experts' verdicts, and what was (not) stored."""
    if trial.stand_in:
        widgets.message("warning", f"Stand-in: {trial.model} is the scripted provider, not a "
                        "model; its verdicts test the plumbing, never a judge.",
                        icon=":material/science:")
    widgets.literal(trial.describe())
    st.caption(f"Tried with {widgets.escape_markdown(trial.model)} on {len(trial.rows)} "
               f"labelled rows ({trial.calls} calls). Nothing was saved: no revision, run, "
               "call or verdict; reports, cards and the Export page are unchanged.")
    st.dataframe(pd.DataFrame([{
        "row": r.item_id, "experts": r.expert, "judge": r.judge,
        "agrees": "yes" if r.agrees else "no",
        "judge's reasoning": r.reasoning or r.problem or "—",
    } for r in trial.rows]), hide_index=True, key="judge_trial_rows")


def _preview(workspace: Workspace, dataset: str, config: JudgeConfig) -> None:
    store = workspace.labels
    held_out = alignment_panel.held_out_ids(workspace, dataset, config.criterion)
    ids = [i for i in store.item_ids(dataset) if i not in held_out]  # test rows stay unseen
    if not ids:
        st.info("This dataset has no rows yet.")
        return
    left, right = st.columns(2)  # "original | swapped" needs ~170 px: half, not a quarter
    # Rows are picked by position: item ids come from files and stay out of widget text.
    index = left.selectbox("Preview row", range(len(ids)), format_func=lambda i: f"row {i + 1}",
                           key=state.keep("judge_preview_row"))
    chosen = right.segmented_control("Order", ["original", "swapped"], default="original",
                                     key=state.keep("judge_preview_order"))
    order: Order = "swapped" if chosen == "swapped" else "original"
    widgets.literal(f"id: {ids[index]}")
    try:
        prompt = judging.render_row(workspace, config, dataset, ids[index], order)
    except RenderError as error:
        st.warning("This row cannot be rendered with this template:")
        st.code(str(error), language=None, wrap_lines=True)
        return
    st.caption(f"About {prompt.approx_tokens():,} input tokens.")
    st.code(prompt.as_text(), language=None, wrap_lines=True)


def _run_options(config: JudgeConfig) -> dict[str, Any]:
    cols = st.columns(5, vertical_alignment="bottom")
    options = {
        "repeats": int(cols[0].number_input("Repeats", 1, 50, config.repeats,
                                            key=state.keep("judge_repeats"))),
        "swap": cols[1].checkbox("Swap order", value=config.swap, key=state.keep("judge_swap"),
                                 help="Also judge with the sources reversed (pairwise: A and "
                                 "B exchanged). Verdicts that flip show position bias."),
        "labelled_only": cols[2].checkbox("Labelled rows only", value=True,
                                          key=state.keep("judge_labelled_only"),
                                          help="Cheap tuning: judge only rows the experts "
                                          "labelled for this criterion."),
        "concurrency": int(cols[3].number_input("Concurrency", 1, 128, 8,
                                                key=state.keep("judge_concurrency"))),
        "limit": int(cols[4].number_input("Row limit (0 = all)", 0, None, 0,
                                          key=state.keep("judge_limit"))) or None,
    }
    if judging.has_batch_api(config.model):
        options["batch"] = st.checkbox(
            "Batch API", value=False, key="judge_batch",
            help="Send the calls through the provider's batch service: half the price, results "
            "within 24 hours. Each batch is recorded before it is sent; a stopped or "
            "interrupted run collects its batches the next time it runs.")
    return options


def _estimate(workspace: Workspace, dataset: str, config: JudgeConfig,
              options: dict[str, Any]) -> bool:
    try:
        plan = judging.plan(
            workspace, config, dataset, repeats=options["repeats"], swap=options["swap"],
            labelled_only=options["labelled_only"], limit=options["limit"],
        )
    except NoLabelledRowsError:
        widgets.message("warning", f"No row of {dataset} is labelled for {config.criterion} "
                        "yet: label some on the Label page, or untick “Labelled rows only” "
                        "to judge every row.")
        return False
    except CalibrateError as error:
        st.warning("This run cannot start:")
        st.code(str(error), language=None, wrap_lines=True)
        return False
    # The page has no price option: the CLI's "--prices FILE" hint would be CLI-speak here.
    widgets.literal("Estimate: " + plan.estimate.describe(prices_hint=None))
    batch_line = judging.batch_cost(config.model, plan.estimate, prices_hint=None)
    if batch_line is not None:
        widgets.literal(batch_line)
    return True


def _start(workspace: Workspace, dataset: str, config: JudgeConfig,
           options: dict[str, Any]) -> bool:
    """Start the run in a background job; False (with the reason shown) when it cannot."""
    settings = resources.get_settings()
    try:
        provider = get_provider(config.model, settings=settings)
    except ProviderConfigError as error:
        widgets.message("error", str(error), icon=":material/key_off:")
        return False

    options = dict(options)
    batch = options.pop("batch", False)

    def work(job: resources.BackgroundJob) -> RunSummary:
        def progress(done: int, total: int, summary: RunSummary) -> None:
            job.advance(done, total=total, message=(
                f"{summary.cached} cached, {summary.scored} scored, {summary.unscored} "
                f"unscored, {summary.failed} failed"))

        if batch:  # the batch service's status (submitted, polled, collected) is the message
            options.pop("concurrency")
            return judging.run(workspace, config, dataset, batch=True, provider=provider,
                               on_progress=progress, should_stop=_JobFlag(job),
                               on_status=lambda text: job.advance(message=text), **options)
        return judging.run(workspace, config, dataset, provider=provider,
                           on_progress=progress, should_stop=_JobFlag(job), **options)

    title = config.label + (" (stand-in)" if is_stand_in(provider.spec) else "")
    resources.get_jobs().start(_job_key(config, dataset), title, work)
    return True


def _job_id(job: resources.BackgroundJob) -> str:
    return f"{job.key}@{job.started_at.isoformat()}"


def _visible_jobs() -> list[resources.BackgroundJob]:
    return [j for j in resources.get_jobs().jobs()
            if j.key.startswith(JOB_PREFIX) and not state.job_dismissed(_job_id(j))][:5]


def _progress() -> None:
    """Every judge job of this server process (see :func:`_job_cards`).

    Polled only while a job runs: a polling rerun every half second would close a dropdown
    the user has open elsewhere on the page.
    """
    jobs = _visible_jobs()
    if any(j.running for j in jobs):
        _live_progress()
    else:
        _job_cards(jobs)


@st.fragment(run_every=0.5)
def _live_progress() -> None:
    """The job cards, polled; once no job runs, one full rerun hands over to the still ones."""
    jobs = _visible_jobs()
    _job_cards(jobs)
    if not any(j.running for j in jobs):
        st.rerun()


def _job_cards(jobs: list[resources.BackgroundJob]) -> None:
    """Running jobs with their progress bar; finished ones collapsed, dismissible.

    A finished job is one line that opens to its summary and can be dismissed (in this tab).
    """
    for job in jobs:
        total = job.total or 0
        title = widgets.escape_markdown(f"{job.title}: {job.done}/{total} — {job.status}")
        if job.running:
            with st.container(border=True):
                fraction = min(job.done / total, 1.0) if total else 0.0
                st.progress(fraction, text=title)
                _job_details(job)
                if st.button("Stop", key=f"stop_{job.key}", icon=":material/stop_circle:",
                             help="Calls in flight finish and are stored."):
                    job.cancel()
            continue
        icon = {"done": ":material/check_circle:", "failed": ":material/error:",
                "cancelled": ":material/cancel:"}.get(job.status, ":material/info:")
        with st.expander(title, icon=icon):
            _job_details(job)
            st.button("Dismiss", key=f"dismiss_{_job_id(job)}", icon=":material/close:",
                      on_click=state.dismiss_job, args=(_job_id(job),))


def _job_details(job: resources.BackgroundJob) -> None:
    widgets.literal("dataset: " + _job_dataset(job.key))
    if job.message:
        st.caption(widgets.escape_markdown(job.message))
    if job.error:
        st.code(job.error, language=None, wrap_lines=True)
    summary = job.result if isinstance(job.result, RunSummary) else None
    if summary is not None:
        st.code(summary.describe(), language=None, wrap_lines=True)


def _results(workspace: Workspace, dataset: str, config: JudgeConfig) -> None:
    try:
        frame = judging.verdicts(workspace, dataset, config.config_id)
    except CalibrateError:
        frame = pd.DataFrame()
    held_out = alignment_panel.held_out_ids(workspace, dataset, config.criterion)
    if held_out and not frame.empty:
        frame = frame[~frame["item_id"].isin(held_out)]
        st.caption(f"{len(held_out)} test rows are hidden while tuning (dev/test split).")
    if frame.empty:
        st.info("No verdicts of this revision on this dataset yet.")
        return
    stand_in = sorted({spec for spec in [config.model,
                                         *judging.run_providers(workspace, dataset, config)]
                       if is_stand_in(spec)})
    if stand_in:
        widgets.message("warning", f"Stand-in results ({', '.join(stand_in)}): "
                        f"{STAND_IN_NOTE.removeprefix('stand-in: ')}.",
                        icon=":material/science:")
    counts = frame["verdict"].value_counts()
    cols = st.columns(4)
    cols[0].metric("Verdict rows", len(frame))
    cols[1].metric("Items", frame["item_id"].nunique())
    cols[2].metric("Unscored", int(counts.get("unscored", 0)))
    flips = swap_flips(frame)
    cols[3].metric("Swap flip rate", f"{flips['flipped'].mean():.0%}" if len(flips) else "—")
    reasons = frame["unscored_reason"].dropna().value_counts()
    if len(reasons):
        st.caption(widgets.escape_markdown(
            "Unscored: " + ", ".join(f"{k} {v}" for k, v in reasons.items())))
    # Missing cells (no reasoning, no unscored reason) read "—", never None/NaN.
    shown = frame.drop(columns=["config_id"]).astype(object)
    st.dataframe(shown.where(shown.notna(), "—"), hide_index=True, height=280)
    ids = list(dict.fromkeys(frame["item_id"]))
    index = st.selectbox("Row details", range(len(ids)), format_func=lambda i: f"row {i + 1}",
                         key=state.keep("judge_detail_row"))
    item_id = ids[index]
    widgets.literal(f"id: {item_id}")
    calls = judging.calls(workspace, dataset, config.config_id)
    for call in calls[calls["item_id"] == item_id].itertuples(index=False):
        with st.container(border=True):
            verdict = call.verdict if call.status == "scored" else call.status
            reason = _text(call.unscored_reason)
            st.caption(widgets.escape_markdown(
                f"repeat {call.repeat}, {call.ordering} order — {verdict}"
                + (f" ({reason})" if reason else "") + f" — {call.retries} retries"))
            for text in (_text(call.reasoning),):
                if text:
                    widgets.literal(text)
            for text in (_text(call.detail), _text(call.error)):
                if text:
                    st.code(text, language=None, wrap_lines=True)
            with st.expander("Raw reply and request"):
                st.code(_text(call.reply) or "(no reply)", language=None, wrap_lines=True)
                raw_request = _text(call.request)
                request = json.loads(raw_request) if raw_request else {}
                st.code(json.dumps(request, indent=2, ensure_ascii=False), language="json",
                        wrap_lines=True)


def _other_edits(choices: dict[str, JudgeConfig], base: JudgeConfig) -> None:
    """Name the other configs that hold unsaved edits in this tab, so none is forgotten."""
    by_key = {f"{EDIT_PREFIX}{c.config_id}": (label, c) for label, c in choices.items()}
    edited = [label for key in state.kept_keys(EDIT_PREFIX)
              if key in by_key and by_key[key][1].config_id != base.config_id
              and state.widget_value(key) != by_key[key][1].to_yaml()
              for label in (by_key[key][0],)]
    if edited:
        st.caption(widgets.escape_markdown("Unsaved edits also in: " + "; ".join(edited)))


def _text(value: object) -> str | None:
    """A text cell, or ``None`` for a missing one (a frame's NaN must never print as "nan")."""
    return value if isinstance(value, str) and value else None


def _revisions(workspace: Workspace, dataset: str, config: JudgeConfig) -> None:
    try:
        from judges.reporting import judge_leaderboard, judges_on
    except ImportError:  # pragma: no cover - the report module ships with the statistics
        return
    same_name = [j for j in judges_on(workspace, dataset) if j.name == config.name]
    if not same_name:
        return
    try:
        board = judge_leaderboard(workspace, dataset, same_name, criterion=config.criterion)
    except CalibrateError as error:
        st.caption("Agreement with the experts appears once rows are labelled for this "
                   f"criterion ({type(error).__name__}).")
        return
    st.dataframe(board.frame(), hide_index=True)


def main() -> None:
    """Render the page."""
    access.require_page("judges")
    st.header("Judges")
    flashed = state.pop_flash()
    if flashed is not None:
        widgets.message(*flashed)
    workspace = resources.get_workspace()
    store = workspace.labels
    datasets = store.datasets()
    if not datasets:
        st.info("Import rows on the Data page first.")
        return
    _progress()
    top = st.columns([2, 3], vertical_alignment="bottom")
    names = [d.name for d in datasets]
    dataset = top[0].selectbox("Dataset", names, key=state.keep("judge_dataset"))
    kind = next(d.kind for d in datasets if d.name == dataset)
    choices = {label: c for label, c in judging.config_choices(workspace).items()
               if c.kind == kind}
    if not choices:
        st.info(f"No {widgets.escape_markdown(kind)} judge config exists yet.")
        return
    label = top[1].selectbox("Judge config", list(choices), key=state.keep(CONFIG_KEY))
    base = choices[label]
    _other_edits(choices, base)
    editor_key = f"{EDIT_PREFIX}{base.config_id}"
    saved = base.to_yaml()
    try:
        current: JudgeConfig | None = config_from_text(state.widget_value(editor_key, saved))
    except ConfigError:
        current = None
    _model_picker(editor_key, saved, current)
    edit, preview = st.columns(2)
    with edit:
        edited, _ = _editor(base)
        if edited is None:
            return
        config, unsaved = _save_as(workspace, editor_key, base, edited)
    with preview:
        _preview(workspace, dataset, config)
    _try(workspace, dataset, config,
         alignment_panel.held_out_ids(workspace, dataset, config.criterion))
    st.subheader("Run")
    options = _run_options(config)
    runnable = _estimate(workspace, dataset, config, options)
    if unsaved:
        st.caption("A full run stores its verdicts under a saved revision: “Save as…” first, "
                   "or try the edits on a few rows above (that saves nothing).")
    clicked = runnable and st.button("Run in the background", type="primary",
                                     icon=":material/play_arrow:", key="judge_run",
                                     disabled=unsaved)
    if clicked and _start(workspace, dataset, config, options):
        st.rerun()
    st.subheader("Results of this revision")
    _results(workspace, dataset, config)
    st.subheader("Revisions compared with the experts")
    _revisions(workspace, dataset, config)
    alignment_panel.render(workspace, dataset, config, unsaved=unsaved)


main()
