"""Judge configs as data: a validated YAML/JSON file whose content hash is its identity.

A :class:`JudgeConfig` holds everything that decides what a judge says: the model, the system
prompt and user template, the few-shot examples, the output contract, the allowed verdicts and
every generation parameter. :attr:`JudgeConfig.config_id` hashes the canonical JSON of the
whole config, so changing one word gives a new id and verdicts of different revisions never mix.
``name`` and ``revision`` are the human-readable handle beside the hash.

The run policy fields (``repeats``, ``swap``, ``aggregation``) are defaults: a run may override
the first two (``calibrate judge run --repeats 3 --swap``) and a report the third
(``calibrate report --aggregation all_agree``) without creating a new config, because they change
*which* calls are made or how they combine, not what any one call sends. Their values are still
part of the canonical form, so editing the file's defaults gives a new id, like any other edit.

``strategy`` says how a verdict is reached. ``single`` (the default) is one call whose reply
carries the verdict under the output contract. ``claim_split`` is the decomposed judgement that
small local models need (see :class:`ClaimSplit`): the prompt (``system``, ``few_shot``,
``template``) extracts the answer's claims, one per line, then one YES/NO question per claim
(``claim_split.check_system`` / ``check_template``) is scored from the reply's log-probabilities.
A config with the default strategy hashes exactly as it did before the field existed.

Template placeholders are ``{name}`` with ``name`` one of :data:`POINTWISE_VARIABLES` /
:data:`PAIRWISE_VARIABLES`; ``{{`` and ``}}`` are literal braces. Braces around anything that is
not an identifier (e.g. a JSON example ``{"verdict": "PASS"}``) are literal too.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from labels.errors import ImportFileError, NotFoundError
from labels.models import PAIRWISE_VERDICTS, POINTWISE_VERDICTS
from labels.reading import read_regular_text
from labels.validation import NAME_MAX_CHARS

HASH_PREFIX = "b2:"
"""Config ids are tagged with the digest that made them, so a future change is detectable."""

POINTWISE_VARIABLES = ("question", "answer", "sources", "reference")
CHECK_VARIABLES = ("claim", "question", "sources")
"""What a claim-split check template may show (it must show ``{claim}``)."""
PAIRWISE_VARIABLES = ("question", "answer_a", "answer_b", "sources", "reference")
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_MARKER = re.compile(r"^[A-Za-z][A-Za-z_ ]*[A-Za-z]$")


class ConfigError(ImportFileError):
    """A judge config file (or text) is not valid; the message names the file and the fields."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GenerationParams(_Strict):
    """Sampling parameters sent with every call (all part of the config hash).

    ``temperature: null`` sends no temperature (some newer models reject non-default sampling).
    ``seed`` is sent where the provider supports it (OpenAI-compatible servers), else ignored;
    repeat ``r`` is sent ``seed + r``, so repeats are distinct samples, not copies.
    ``json_mode`` asks OpenAI-compatible servers for a JSON object reply.
    """

    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=1024, gt=0, le=20_000)
    seed: int | None = None
    json_mode: bool = False


class FewShot(_Strict):
    """One worked example shown before the real item: a user turn and the ideal reply."""

    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)


class OutputContract(_Strict):
    """How a reply carries its verdict.

    ``format: marker`` — free text ending with ``<MARKER>: <LABEL>``; the parser binds to the
    **last** marker in the reply, so a quoted marker earlier in the reasoning does not count.

    ``format: label`` — the reply is just the label (``PASS``), as a small model asked for a
    verdict-only reply gives it: the first word decides (markdown emphasis, quotes and a final
    full stop are ignored; a ``<MARKER>: <LABEL>`` reply is read as the marker format).

    ``format: json`` — a JSON object with ``verdict_key`` and ``reasoning_key``; the last JSON
    object in the reply that has the verdict key wins. With ``claims_key`` and
    ``verdict_from_claims``, the verdict is derived from the claim list: ``pass`` when every
    claim's status maps to ``supported``, ``fail`` when any maps to ``unsupported``.
    """

    format: Literal["json", "marker", "label"]
    marker: str = "VERDICT"
    verdict_key: str = "verdict"
    reasoning_key: str = "reasoning"
    claims_key: str | None = None
    claim_statuses: dict[str, Literal["supported", "unsupported"]] = Field(default_factory=dict)
    verdict_from_claims: bool = False

    @field_validator("marker")
    @classmethod
    def _marker_word(cls, value: str) -> str:
        if not _MARKER.match(value):
            raise ValueError("marker must be letters, spaces or underscores, e.g. VERDICT")
        return value

    @model_validator(mode="after")
    def _claims_consistent(self) -> OutputContract:
        if self.verdict_from_claims:
            if self.format != "json" or not self.claims_key:
                raise ValueError("verdict_from_claims needs format: json and a claims_key")
            if "supported" not in self.claim_statuses.values():
                raise ValueError("claim_statuses must map at least one status to 'supported'")
        return self


class ClaimSplit(_Strict):
    """Step 2 of a ``claim_split`` judge: one YES/NO question per extracted claim.

    Each claim is asked with ``check_system`` and ``check_template`` (``{claim}``, and usually
    ``{sources}``; the sources come in the call's order, so a position swap reorders them).
    The reply is ``check_max_tokens`` long and the request asks for the ``top_logprobs`` most
    likely first tokens; ``p_yes = P(yes) / (P(yes) + P(no))``, summing the probabilities of
    the tokens that read as ``yes_label``/``no_label`` ignoring case and spaces. A claim is
    supported iff ``p_yes >= threshold``; the verdict is ``fail`` if any claim is unsupported,
    else ``pass``. A provider that returns no log-probabilities is scored from the reply text
    (``p_yes`` 1 or 0).

    Step 1's reply is one claim per line; list markers are stripped, repeats dropped (small models
    sometimes repeat a pair), and at most ``max_claims`` kept. A reply of only ``none_marker``
    (e.g. the answer declines to answer) has no claims and gets ``no_claims_verdict``.
    """

    check_system: str = Field(min_length=1)
    check_template: str = Field(min_length=1)
    threshold: float = Field(default=0.5, gt=0.0, lt=1.0)
    yes_label: str = "YES"
    no_label: str = "NO"
    top_logprobs: int = Field(default=8, ge=1, le=20)
    check_max_tokens: int = Field(default=1, ge=1, le=16)
    max_claims: int = Field(default=8, ge=1, le=50)
    none_marker: str = "NONE"
    no_claims_verdict: Literal["pass", "fail", "unsure"] = "pass"

    @model_validator(mode="after")
    def _check_template(self) -> ClaimSplit:
        variables = template_variables(self.check_template)
        unknown = [v for v in variables if v not in CHECK_VARIABLES]
        if unknown:
            raise ValueError(
                f"check_template: unknown variable(s) {', '.join('{' + v + '}' for v in unknown)}"
                f"; it may use {', '.join('{' + v + '}' for v in CHECK_VARIABLES)}"
            )
        if "claim" not in variables:
            raise ValueError("check_template must show {claim}")
        yes, no = self.yes_label.strip().upper(), self.no_label.strip().upper()
        if not yes or not no or yes == no:
            raise ValueError("yes_label and no_label must be two different non-empty words")
        return self


Strategy = Literal["single", "claim_split"]
DEFAULT_STRATEGY: Strategy = "single"
_DEFAULTS_LEFT_OUT = {"strategy": DEFAULT_STRATEGY, "claim_split": None}
"""Fields added after configs were first hashed: left out of the canonical form at their default
value, so every existing config keeps its id."""


class JudgeConfig(_Strict):
    """One judge: prompt, model, output contract, verdicts and generation parameters.

    Load with :func:`load_config` (a file) or :func:`load_builtin` (a built-in template).
    """

    name: str = Field(description="short handle, e.g. faithfulness")
    revision: int = Field(default=1, ge=1)
    description: str = Field(default="", description="what the judge checks, for people")
    criterion: str = Field(description="the human-label criterion it is calibrated against")
    kind: Literal["pointwise", "pairwise"] = "pointwise"
    model: str = Field(description="provider/model, e.g. openai/gpt-4o-mini")
    system: str = ""
    template: str = Field(min_length=1, description="the user message, with {placeholders}")
    few_shot: tuple[FewShot, ...] = ()
    output: OutputContract = OutputContract(format="marker")
    verdicts: dict[str, str] = Field(
        description="reply label -> verdict, e.g. {PASS: pass, FAIL: fail, UNSURE: unsure}"
    )
    generation: GenerationParams = GenerationParams()
    repeats: int = Field(default=1, ge=1, le=50)
    swap: bool = False
    source_order: Literal["reverse", "shuffle"] = "reverse"
    shuffle_seed: int = 0
    # How a run's calls of one item combine in a report (judges.aggregation). "unanimous" and
    # "any_fail" are older spellings kept so configs written with them load with the same id:
    # "unanimous" reads as all_agree; "any_fail" was never implemented and is refused by name.
    aggregation: Literal["all_agree", "majority", "unanimous", "any_fail"] = "majority"
    strategy: Strategy = DEFAULT_STRATEGY
    claim_split: ClaimSplit | None = None

    @field_validator("name")
    @classmethod
    def _name_slug(cls, value: str) -> str:
        # Stricter than labels.validation.NAME_RULE (a config name is also a file name).
        if not _NAME.match(value) or len(value) > NAME_MAX_CHARS:
            raise ValueError(
                f"use at most {NAME_MAX_CHARS} lowercase letters, digits, '.', '_' or '-' "
                "(e.g. faithfulness)"
            )
        return value

    @field_validator("model")
    @classmethod
    def _model_spec(cls, value: str) -> str:
        provider, _, model = value.partition("/")
        if not provider or not model:
            raise ValueError("write provider/model, e.g. openai/gpt-4o-mini")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> JudgeConfig:
        allowed = PAIRWISE_VERDICTS if self.kind == "pairwise" else POINTWISE_VERDICTS
        bad = sorted({v for v in self.verdicts.values() if v not in allowed})
        if bad:
            raise ValueError(
                f"verdicts: {bad} not allowed for a {self.kind} judge (use {', '.join(allowed)})"
            )
        missing = [v for v in allowed if v not in self.verdicts.values()]
        if missing:
            raise ValueError(
                f"verdicts: no reply label maps to {', '.join(missing)} (a {self.kind} judge "
                f"needs all of {', '.join(allowed)}, including an explicit "
                f"{'tie' if self.kind == 'pairwise' else 'unsure'})"
            )
        labels = [label.upper() for label in self.verdicts]
        if len(set(labels)) != len(labels):
            raise ValueError("verdicts: reply labels must differ ignoring case")
        for label in self.verdicts:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", label):
                raise ValueError(f"verdicts: reply label {label!r} must be one word")
        variables = template_variables(self.template)
        known = PAIRWISE_VARIABLES if self.kind == "pairwise" else POINTWISE_VARIABLES
        unknown = [v for v in variables if v not in known]
        if unknown:
            raise ValueError(
                f"template: unknown variable(s) {', '.join('{' + v + '}' for v in unknown)}; "
                f"a {self.kind} template may use {', '.join('{' + v + '}' for v in known)} "
                "(write {{ and }} for literal braces)"
            )
        if self.strategy == "claim_split":
            if self.kind != "pointwise":
                raise ValueError("strategy claim_split judges pointwise rows only")
            if self.claim_split is None:
                raise ValueError("strategy claim_split needs a claim_split section "
                                 "(check_system, check_template, threshold, ...)")
        elif self.claim_split is not None:
            raise ValueError("claim_split is set but strategy is not claim_split")
        needed = ("answer_a", "answer_b") if self.kind == "pairwise" else ("answer",)
        absent = [v for v in needed if v not in variables]
        if absent:
            raise ValueError(
                f"template: a {self.kind} template must show "
                f"{', '.join('{' + v + '}' for v in absent)}"
            )
        return self

    # -- identity ---------------------------------------------------------------------------

    def canonical_json(self) -> str:
        """The canonical text the id hashes: sorted keys, no whitespace, every field.

        Fields added later (``strategy``, ``claim_split``) are left out at their default value,
        so configs written before them keep their ids.
        """
        return canonical_json(self.to_data())

    def to_data(self) -> dict[str, Any]:
        """The config as JSON-ready data, without later-added fields at their default."""
        data = self.model_dump(mode="json")
        for key, default in _DEFAULTS_LEFT_OUT.items():
            if data.get(key) == default:
                del data[key]
        return data

    @property
    def config_id(self) -> str:
        """``b2:<32 hex>``: BLAKE2b-128 of :meth:`canonical_json`."""
        digest = hashlib.blake2b(self.canonical_json().encode(), digest_size=16).hexdigest()
        return HASH_PREFIX + digest

    @property
    def label(self) -> str:
        """``name r<revision> (<short id>)`` for people."""
        return f"{self.name} r{self.revision} ({self.config_id[:11]})"

    @property
    def provider_name(self) -> str:
        """The part of :attr:`model` before the first ``/``."""
        return self.model.partition("/")[0]

    def reply_labels(self) -> list[str]:
        """The labels a reply may use, in config order."""
        return list(self.verdicts)

    def verdict_for_label(self, label: str) -> str | None:
        """The verdict a reply label means (case-insensitive), or ``None`` when off the list."""
        wanted = label.strip().upper()
        for reply_label, verdict in self.verdicts.items():
            if reply_label.upper() == wanted:
                return verdict
        return None

    # -- serialisation ----------------------------------------------------------------------

    def to_yaml(self) -> str:
        """The config as YAML (block strings for multi-line prompts), loadable again."""
        return yaml.dump(
            self.to_data(), Dumper=_BlockDumper, sort_keys=False,
            allow_unicode=True, width=100,
        )

    def with_revision(self, **changes: Any) -> JudgeConfig:
        """A copy with ``changes`` applied and the revision bumped (validated again)."""
        data = self.model_dump(mode="json")
        data.update(changes)
        data["revision"] = self.revision + 1
        return JudgeConfig.model_validate(data)


class _BlockDumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str_presenter)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, compact separators and real unicode (the hashed form)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def template_variables(template: str) -> list[str]:
    """The ``{placeholders}`` of a template, in order of first use."""
    seen: list[str] = []
    for match in _PLACEHOLDER.finditer(template):
        name = match.group(1)
        if name and name not in seen:
            seen.append(name)
    return seen


def _describe(error: ValidationError) -> str:
    lines = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            message = "unknown key (not part of a judge config)"
        lines.append(f"{where}: {message}")
    return "; ".join(lines)


def parse_config(data: Any, *, source: str = "<config>") -> JudgeConfig:
    """Validate a mapping as a :class:`JudgeConfig`; :class:`ConfigError` names each bad field."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"a judge config must be a mapping of keys, got {type(data).__name__}", path=source
        )
    try:
        return JudgeConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_describe(error), path=source) from None


def config_from_text(text: str, *, source: str = "<config>", format: str = "yaml") -> JudgeConfig:
    """Parse YAML (or JSON, which is YAML too) text into a validated config."""
    try:
        data = json.loads(text) if format == "json" else yaml.safe_load(text)
    except (yaml.YAMLError, json.JSONDecodeError) as error:
        raise ConfigError(f"not valid {format.upper()}: {error}", path=source) from None
    return parse_config(data, source=source)


def load_config(path: str | Path) -> JudgeConfig:
    """Load and validate a judge config file (``.yaml``, ``.yml`` or ``.json``)."""
    file = Path(path)
    if file.suffix.lower() not in CONFIG_SUFFIXES:
        raise ConfigError(
            f"a judge config file must end in {', '.join(CONFIG_SUFFIXES)}", path=str(path)
        )
    try:
        text = read_regular_text(file)  # a FIFO or device is refused, not waited on
    except FileNotFoundError:
        raise ConfigError("no such file", path=str(path)) from None
    except ImportFileError as error:
        raise ConfigError(error.reason, path=str(path)) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read: {error}", path=str(path)) from None
    fmt = "json" if file.suffix.lower() == ".json" else "yaml"
    return config_from_text(text, source=str(path), format=fmt)


def builtin_dir() -> Path:
    """The folder of the built-in templates (``judges/configs``)."""
    return Path(__file__).resolve().parent / "configs"


def builtin_names() -> list[str]:
    """Names of the built-in judge templates."""
    return sorted(p.stem for p in builtin_dir().glob("*.yaml"))


def load_builtin(name: str) -> JudgeConfig:
    """A built-in template by name, or :class:`~labels.errors.NotFoundError` listing them."""
    path = builtin_dir() / f"{name}.yaml"
    if not path.is_file():
        raise NotFoundError(
            f"no built-in judge named {name!r} (built-in: {', '.join(builtin_names())})"
        )
    return load_config(path)


def resolve_config(name_or_path: str) -> JudgeConfig:
    """A built-in name, or a path to a config file.

    Only strings that look like a file (a config suffix or a path separator) are read as files;
    anything else must be a built-in name. Template text is never accepted here.
    """
    looks_like_file = name_or_path.lower().endswith(CONFIG_SUFFIXES) or any(
        sep in name_or_path for sep in ("/", "\\")
    )
    if looks_like_file:
        return load_config(name_or_path)
    return load_builtin(name_or_path)


__all__ = [
    "CHECK_VARIABLES", "CONFIG_SUFFIXES", "HASH_PREFIX", "PAIRWISE_VARIABLES",
    "POINTWISE_VARIABLES", "ClaimSplit", "ConfigError",
    "FewShot", "GenerationParams", "JudgeConfig", "OutputContract", "builtin_dir",
    "builtin_names", "canonical_json", "config_from_text", "load_builtin", "load_config",
    "parse_config", "resolve_config", "template_variables",
]
