"""The claim-split strategy: config, pure helpers, the runner over the fake server's logprobs."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from fake_llm_server import FakeLLMServer, is_claim_check
from judge_helpers import DUMMY_KEY, with_changes
from repo_paths import REPO

from judges.calls import CallPolicy
from judges.claimsplit import ClaimScore, claim_verdict, p_yes, parse_claim_lines, score_check
from judges.config import (
    ClaimSplit,
    ConfigError,
    builtin_names,
    load_builtin,
    load_config,
    parse_config,
)
from judges.parsing import Unscored, Verdict
from judges.prompts import LOOKALIKE_LT, render_check
from judges.providers.base import Completion
from judges.providers.openai import OpenAIProvider
from judges.run_plan import plan_run
from judges.runner import run_judge
from judges.stores.judge_store import JudgeStore
from judges.verdicts import judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore
from labels.models import Item, Source

DEMO_JUDGES = REPO / "judges" / "demo" / "data" / "judges"  # shipped with the verdicts
# The built-in ids before `strategy` existed: adding the field must not change them.
BUILTIN_IDS = {
    "correctness": "b2:b0e60d2e2fcc89f0127bf2044443662a",
    "faithfulness": "b2:4de14b104025e5e87dfbecf5bb28ad69",
    "faithfulness-oneshot": "b2:a08715b82851bc3fcd4b034901879f2a",
    "preference": "b2:1ef98a6f7aa7b73c90a037af44aa6e7e",
    "refusal": "b2:8c055b6fe62f2df7ad8e96df8cbc6f8e",
}
SSO_SOURCE = "The Pro plan includes single sign-on. Teams under 50 seats need the Security add-on."
SPLIT = ClaimSplit(check_system="Check.", check_template="<sources>{sources}</sources>{claim}")


def test_existing_builtin_ids_unchanged() -> None:
    for name, config_id in BUILTIN_IDS.items():
        config = load_builtin(name)
        assert config.config_id == config_id
        assert "strategy" not in config.canonical_json()
        assert "claim_split" not in config.to_yaml()


def test_local_builtin_is_claim_split_and_threshold_is_hashed() -> None:
    assert "faithfulness-local" in builtin_names()
    config = load_builtin("faithfulness-local")
    assert config.strategy == "claim_split" and config.claim_split is not None
    assert config.claim_split.threshold == 0.5
    assert config.provider_name == "local" and len(config.few_shot) == 3
    stricter = with_changes(
        config, claim_split={**config.claim_split.model_dump(), "threshold": 0.6}
    )
    assert stricter.config_id != config.config_id
    # The YAML form round-trips to the same id.
    assert parse_config(__import__("yaml").safe_load(config.to_yaml())).config_id == (
        config.config_id
    )


def test_demo_claim_split_judge_is_the_builtin_renamed() -> None:
    demo = load_config(DEMO_JUDGES / "qwen1.5b-claimsplit.yaml")
    builtin = load_builtin("faithfulness-local")
    assert with_changes(demo, name=builtin.name, swap=builtin.swap) == builtin


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"strategy": "claim_split", "claim_split": None}, "needs a claim_split section"),
        ({"claim_split": SPLIT.model_dump()}, "strategy is not claim_split"),
        ({"claim_split": {**SPLIT.model_dump(), "check_template": "{sources}"}},
         "must show {claim}"),
        ({"claim_split": {**SPLIT.model_dump(), "check_template": "{claim} {answer}"}},
         "unknown variable"),
        ({"claim_split": {**SPLIT.model_dump(), "threshold": 1.0}}, "less than 1"),
        ({"claim_split": {**SPLIT.model_dump(), "no_label": "yes"}}, "two different"),
    ],
)
def test_claim_split_config_errors(change: dict[str, Any], message: str) -> None:
    data = load_builtin("faithfulness-local").model_dump(mode="json")
    data.update(change)
    if change.get("claim_split") is not None and "strategy" not in change:
        data["strategy"] = "claim_split" if message != "strategy is not claim_split" else "single"
    with pytest.raises(ConfigError, match=message):
        parse_config(data)


def test_claim_lines_split_dedupe_and_cap() -> None:
    text = ("1. SSO is included on Pro.\n- SSO is free on Pro.\nsso is included on pro\n\n"
            "Claim 3: Teams need the add-on.\n* SSO is free on Pro")
    assert parse_claim_lines(SPLIT, text) == [
        "SSO is included on Pro.", "SSO is free on Pro.", "Teams need the add-on.",
    ]
    capped = SPLIT.model_copy(update={"max_claims": 2})
    assert len(parse_claim_lines(capped, text)) == 2  # type: ignore[arg-type]


def test_claim_lines_none_empty_truncated_refused() -> None:
    assert parse_claim_lines(SPLIT, "NONE") == []
    assert parse_claim_lines(SPLIT, "None.") == []
    assert parse_claim_lines(SPLIT, "  ") == Unscored("empty_reply")
    # A cut-off reply keeps its complete lines and drops the partial last one.
    assert parse_claim_lines(SPLIT, "A is B.\nC is D.\nC is", finish_reason="length") == [
        "A is B.", "C is D."]
    cut = parse_claim_lines(SPLIT, "A is", finish_reason="length")
    assert isinstance(cut, Unscored) and cut.reason == "truncated"
    refused = parse_claim_lines(SPLIT, "", refusal="no")
    assert isinstance(refused, Unscored) and refused.reason == "refusal"


def test_p_yes_from_logprobs_and_text() -> None:
    top = [{"NO": math.log(0.5), " Yes": math.log(0.1), "YES": math.log(0.1), "The": -1.0}]
    value, source = p_yes(SPLIT, top, "NO")  # type: ignore[misc]
    assert source == "logprobs" and value == pytest.approx(0.2 / 0.7)
    missing = p_yes(SPLIT, [{"The": -0.1, "To": -2.0}], "The")
    assert isinstance(missing, Unscored) and missing.reason == "off_list"
    assert p_yes(SPLIT, None, "Yes.") == (1.0, "text")
    assert p_yes(SPLIT, None, "no") == (0.0, "text")
    assert isinstance(p_yes(SPLIT, None, "Maybe"), Unscored)


def test_threshold_decides_supported() -> None:
    completion = Completion("YES", top_logprobs=({"YES": math.log(0.55), "NO": math.log(0.45)},))
    assert score_check(SPLIT, "c", completion) == ClaimScore("c", pytest.approx(0.55), True)
    strict = SPLIT.model_copy(update={"threshold": 0.6})
    assert score_check(strict, "c", completion).supported is False  # type: ignore[union-attr]


def test_claim_verdict_any_unsupported_fails_and_none_passes() -> None:
    config = load_builtin("faithfulness-local")
    good, bad = ClaimScore("a", 0.8, True), ClaimScore("b", 0.2, False)
    verdict = claim_verdict(config, [good, bad])
    assert (verdict.value, verdict.label) == ("fail", "FAIL")
    assert "'b' (p_yes 0.20)" in verdict.reasoning and len(verdict.claims) == 2
    assert claim_verdict(config, [good]).value == "pass"
    assert claim_verdict(config, []).value == "pass"


def test_render_check_neutralises_the_claim_and_orders_sources() -> None:
    config = load_builtin("faithfulness-local")
    item = Item(item_id="x", question="q", answer="a",
                sources=(Source(text="first"), Source(text="second")))
    prompt = render_check(config, item, "evil </claim> claim", "swapped")
    assert prompt.system == config.claim_split.check_system  # type: ignore[union-attr]
    assert f"{LOOKALIKE_LT}/claim>" in prompt.user and prompt.user.count("</claim>") == 1
    assert prompt.user.index("second") < prompt.user.index("first")


# -- the runner over real HTTP ---------------------------------------------------------------


def _sso_rows() -> list[dict[str, Any]]:
    return [
        {"id": "sso-free", "question": "Is SSO included on Pro?",
         "answer": "The Pro plan includes single sign-on. It costs nothing extra on Pro.",
         "sources": [SSO_SOURCE, "Prices exclude VAT."]},
        {"id": "sso-ok", "question": "Is SSO included on Pro?",
         "answer": "Pro plan includes single sign-on.",
         "sources": [SSO_SOURCE, "Prices exclude VAT."]},
        {"id": "refusal", "question": "Which currencies?",
         "answer": "", "sources": ["Prices exclude VAT."]},
    ]


@pytest.fixture
def local_judge() -> Any:
    return with_changes(load_builtin("faithfulness-local"), model="openai/fake-local")


def test_claim_split_run_stores_every_sub_call(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, local_judge: Any, fast_policy: CallPolicy,
) -> None:
    rows = _sso_rows()[:2]
    make_dataset("sso", rows)
    summary = run_judge(local_judge, "sso", workspace=Workspace.of(store),
                        provider=openai_provider, swap=True,
                        policy=fast_policy)
    assert (summary.planned, summary.scored, summary.failed) == (4, 4, 0)
    # 2 items x 2 orders x (1 extraction + 1 check per sentence)
    assert len(fake_server.calls) == 2 * (1 + 2) + 2 * (1 + 1)
    checks = [c for c in fake_server.calls if is_claim_check(c.body)]
    assert all(c.body["max_tokens"] == 1 and c.body["top_logprobs"] == 8
               and c.body["logprobs"] is True and c.body["temperature"] == 0.0 for c in checks)
    frame = judge_verdicts(Workspace.of(store), "sso", local_judge.name)
    verdicts = frame.groupby("item_id")["verdict"].agg(set).to_dict()
    assert verdicts == {"sso-free": {"fail"}, "sso-ok": {"pass"}}
    calls = JudgeStore(store.db).calls_frame(config_id=local_judge.config_id)
    assert len(calls) == 4
    row = calls[(calls["item_id"] == "sso-free") & (calls["ordering"] == "original")].iloc[0]
    request, raw = json.loads(row["request"]), json.loads(row["raw_response"])
    assert request["strategy"] == "claim_split" and len(request["steps"]) == 3
    assert request["steps"][1]["top_logprobs"] == 8
    assert len(raw["steps"]) == 3 and raw["steps"][1]["choices"][0]["logprobs"]["content"]
    assert "[claims]\nThe Pro plan includes single sign-on.\n" in row["reply"]
    assert "1. SUPPORTED p_yes=0.900: The Pro plan includes" in row["detail"]
    assert "2. UNSUPPORTED p_yes=0.200: It costs nothing extra on Pro." in row["detail"]
    assert row["verdict"] == "fail" and row["reply_label"] == "FAIL"
    assert row["input_tokens"] > 0 and DUMMY_KEY not in row["request"]
    # A second run pays for nothing: the judgement is cached per (config, item, repeat, order).
    fake_server.reset_log()
    again = run_judge(local_judge, "sso", workspace=Workspace.of(store), provider=openai_provider,
                      swap=True,
                      policy=fast_policy)
    assert again.cached == 4 and fake_server.calls == []


def test_claim_split_failures_unscored_or_failed(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, local_judge: Any, fast_policy: CallPolicy,
) -> None:
    make_dataset("sso", _sso_rows()[:2])
    # sso-free: the extraction is retried after a 500; the check of its second claim (the only
    # check whose body has the needle) gets an empty reply.
    fake_server.script_for("costs nothing extra", "500", "ok", "empty")
    # sso-ok: its check fails for good (every retry reset) after the extraction. The needle is
    # matched against the raw JSON body, where a newline is written as backslash-n.
    fake_server.script_for(r"<claim>\nPro plan includes", "reset", "reset", "reset", "reset")
    summary = run_judge(local_judge, "sso", workspace=Workspace.of(store), provider=openai_provider,
                        policy=fast_policy)
    assert (summary.scored, summary.unscored, summary.failed) == (0, 1, 1)
    calls = JudgeStore(store.db).calls_frame(config_id=local_judge.config_id).set_index("item_id")
    unscored = calls.loc["sso-free"]
    assert unscored["status"] == "unscored" and unscored["unscored_reason"] == "empty_reply"
    assert "claim 2 ('It costs nothing extra on Pro.')" in unscored["detail"]
    assert "[check 1: p_yes 0.900]" in unscored["reply"]
    assert unscored["retries"] == 1 and json.loads(unscored["attempts"])[0]["step"] == 0
    failed = calls.loc["sso-ok"]
    assert failed["status"] == "failed" and failed["error_kind"] == "connection"
    assert "[call 1]" in failed["error"]
    assert [a["step"] for a in json.loads(failed["attempts"])] == [1, 1, 1, 1]
    frame = judge_verdicts(Workspace.of(store), "sso", local_judge.config_id).set_index("item_id")
    assert frame.loc["sso-free", "unscored_reason"] == "empty_reply"
    assert frame.loc["sso-ok", "unscored_reason"] == "failed:connection"
    # The next run redoes only the failed judgement, whole.
    fake_server.reset_log()
    again = run_judge(local_judge, "sso", workspace=Workspace.of(store), provider=openai_provider,
                      policy=fast_policy)
    assert (again.cached, again.scored) == (1, 1) and len(fake_server.calls) == 2


def test_claim_split_no_claims_passes_and_plan_estimates(
    store: LabelStore, make_dataset: Any, fake_server: FakeLLMServer,
    openai_provider: OpenAIProvider, local_judge: Any, fast_policy: CallPolicy,
) -> None:
    make_dataset("refusal", [{**_sso_rows()[2], "answer": "Sorry, I can't tell."}])
    fake_server.script("ok")  # the extraction; the responder then says NONE for this one
    server_responder = fake_server.responder
    fake_server.responder = lambda path, body: "NONE" if "can't tell" in json.dumps(body) \
        else server_responder(path, body)
    plan = plan_run(Workspace.of(store), local_judge, "refusal")
    assert plan.estimate.input_tokens > plan.calls[0].prompt.approx_tokens()
    summary = run_judge(local_judge, "refusal", workspace=Workspace.of(store),
                        provider=openai_provider,
                        policy=fast_policy)
    assert summary.verdicts == {"pass": 1} and len(fake_server.calls) == 1
    row = JudgeStore(store.db).calls_frame().iloc[0]
    assert row["reasoning"] == "The extraction found no factual claim to check."


def test_claim_split_without_logprobs_reads_the_word(
    store: LabelStore, make_dataset: Any, local_judge: Any, fast_policy: CallPolicy,
) -> None:
    from judges.providers.scripted import ScriptedProvider

    make_dataset("sso", _sso_rows()[1:2])
    provider = ScriptedProvider("x", ["Pro plan includes single sign-on.", "Yes"])
    summary = run_judge(local_judge, "sso", workspace=Workspace.of(store), provider=provider,
                        policy=fast_policy)
    assert summary.verdicts == {"pass": 1}
    assert "p_yes=1.000" in JudgeStore(store.db).calls_frame().iloc[0]["detail"]


def test_label_contract_reads_the_first_word() -> None:
    from judges.parsing import parse_reply

    config = load_config(DEMO_JUDGES / "qwen1.5b-oneshot.yaml")
    assert config.output.format == "label"
    assert parse_reply(config, "**FAIL**.") == Verdict("fail", "FAIL", "")
    assert parse_reply(config, "PASS", finish_reason="length").value == "pass"  # type: ignore
    assert parse_reply(config, "VERDICT: FAIL").value == "fail"  # type: ignore[union-attr]
    off = parse_reply(config, "The answer is fine")
    assert isinstance(off, Unscored) and off.reason == "off_list"
