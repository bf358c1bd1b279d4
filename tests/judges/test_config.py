"""Judge configs: validation, content-hash identity, built-ins, loading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_helpers import with_changes

from judges.config import (
    ConfigError,
    JudgeConfig,
    builtin_dir,
    builtin_names,
    config_from_text,
    load_builtin,
    load_config,
    resolve_config,
    template_variables,
)
from labels.errors import NotFoundError

BUILTINS = [
    "correctness", "faithfulness", "faithfulness-local", "faithfulness-oneshot", "preference",
    "refusal",
]


def test_builtins_exist_and_validate() -> None:
    assert builtin_names() == BUILTINS
    ids = set()
    for name in BUILTINS:
        config = load_builtin(name)
        assert config.name == name
        assert config.description, f"{name} must say what it checks"
        assert config.config_id.startswith("b2:") and len(config.config_id) == 3 + 32
        ids.add(config.config_id)
    assert len(ids) == len(BUILTINS)


def test_builtin_files_document_what_they_check() -> None:
    for name in BUILTINS:
        text = (builtin_dir() / f"{name}.yaml").read_text(encoding="utf-8")
        assert "What it checks" in text, name


def test_claim_split_faithfulness_contract() -> None:
    config = load_builtin("faithfulness")
    assert config.output.verdict_from_claims
    assert set(config.output.claim_statuses) == {"SUPPORTED", "CONTRADICTED", "NOT_FOUND"}
    assert config.output.claim_statuses["NOT_FOUND"] == "unsupported"


def test_pairwise_builtin_swaps_by_default() -> None:
    config = load_builtin("preference")
    assert config.kind == "pairwise" and config.swap
    assert set(config.verdicts.values()) == {"a", "b", "tie"}


def test_one_word_changes_the_id_and_same_content_keeps_it() -> None:
    config = load_builtin("faithfulness-oneshot")
    again = load_builtin("faithfulness-oneshot")
    assert config.config_id == again.config_id
    edited = with_changes(config, template=config.template.replace("briefly", "carefully", 1)
                          if "briefly" in config.template
                          else config.template.replace("Reason", "Think", 1))
    assert edited.config_id != config.config_id


@pytest.mark.parametrize(
    "change",
    [
        {"generation": {"temperature": 0.7, "max_tokens": 600, "seed": 7, "json_mode": False}},
        {"generation": {"temperature": 0.0, "max_tokens": 601, "seed": 7, "json_mode": False}},
        {"generation": {"temperature": 0.0, "max_tokens": 600, "seed": 8, "json_mode": False}},
        {"model": "openai/gpt-4.1-mini"},
        {"verdicts": {"PASS": "pass", "FAIL": "fail", "UNSURE": "unsure", "NA": "unsure"}},
        {"system": "Be strict."},
        {"name": "faithfulness-copy"},
    ],
)
def test_everything_that_decides_a_verdict_is_in_the_hash(change: dict[str, object]) -> None:
    config = load_builtin("faithfulness-oneshot")
    assert with_changes(config, **change).config_id != config.config_id


def test_yaml_round_trip_keeps_the_id() -> None:
    for name in BUILTINS:
        config = load_builtin(name)
        again = config_from_text(config.to_yaml())
        assert again == config and again.config_id == config.config_id


def test_json_file_loads(tmp_path: Path) -> None:
    config = load_builtin("correctness")
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(config.model_dump(mode="json")), encoding="utf-8")
    assert load_config(path).config_id == config.config_id
    assert resolve_config(str(path)).config_id == config.config_id


def test_unknown_key_rejected_naming_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(load_builtin("correctness").to_yaml() + "temprature: 0.5\n",
                    encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert str(path) in str(error.value)
    assert "temprature: unknown key" in str(error.value)


def test_nested_unknown_key_and_bad_value(tmp_path: Path) -> None:
    data = load_builtin("correctness").model_dump(mode="json")
    data["generation"]["top_k"] = 3
    data["output"]["format"] = "xml"
    with pytest.raises(ConfigError) as error:
        config_from_text(json.dumps(data), format="json", source="x.json")
    message = str(error.value)
    assert "generation.top_k: unknown key" in message
    assert "output.format" in message


def test_template_variables_are_checked() -> None:
    config = load_builtin("correctness")
    with pytest.raises(ConfigError, match=r"unknown variable\(s\) \{context\}"):
        with_changes_error(config, template="{question} {answer} {context}")
    with pytest.raises(ConfigError, match=r"must show \{answer\}"):
        with_changes_error(config, template="{question} only")
    pair = load_builtin("preference")
    with pytest.raises(ConfigError, match=r"\{answer\}"):
        with_changes_error(pair, template="{question} {answer} {answer_a} {answer_b}")


def with_changes_error(config: JudgeConfig, **changes: object) -> None:
    data = {**config.model_dump(mode="json"), **changes}
    config_from_text(json.dumps(data), format="json")


def test_literal_braces_and_json_examples_are_not_variables() -> None:
    assert template_variables('{{not}} {"verdict": "PASS"} {answer} {question} {answer}') == [
        "answer", "question"
    ]


def test_verdicts_must_cover_the_kind_including_unsure() -> None:
    config = load_builtin("correctness")
    with pytest.raises(ConfigError, match="unsure"):
        with_changes_error(config, verdicts={"PASS": "pass", "FAIL": "fail"})
    with pytest.raises(ConfigError, match="not allowed"):
        with_changes_error(config, verdicts={"PASS": "pass", "FAIL": "fail", "U": "unsure",
                                             "A": "a"})
    with pytest.raises(ConfigError, match="differ ignoring case"):
        with_changes_error(config, verdicts={"PASS": "pass", "pass": "pass", "FAIL": "fail",
                                             "UNSURE": "unsure"})


def test_model_needs_provider_prefix_and_name_is_a_slug() -> None:
    config = load_builtin("correctness")
    with pytest.raises(ConfigError, match="provider/model"):
        with_changes_error(config, model="gpt-4o")
    with pytest.raises(ConfigError, match="lowercase"):
        with_changes_error(config, name="My Judge")


def test_resolve_never_reads_text_as_a_template(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="built-in"):
        resolve_config("Judge this answer: {answer}")
    with pytest.raises(ConfigError, match="no such file"):
        resolve_config(str(tmp_path / "missing.yaml"))
    with pytest.raises(ConfigError, match="must end in"):
        load_config(tmp_path / "config.txt")


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML"):
        load_config(path)
    path.write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(path)


def test_with_revision_bumps_and_rehashes() -> None:
    config = load_builtin("refusal")
    newer = config.with_revision(system=config.system + " Be brief.")
    assert newer.revision == config.revision + 1
    assert newer.name == config.name and newer.config_id != config.config_id
