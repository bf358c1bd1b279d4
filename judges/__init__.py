"""Judge configs, providers, runner and calibration statistics: the Python API.

Everything a notebook or CI script needs is importable from here, e.g.::

    from judges import calibration_report, export_card, gate, run_judge

Names load on first use (PEP 562), so importing ``judges`` (e.g. from the CLI) stays light.
This package is a plain library: it never imports a front end (``calibrate_app``).
"""

from __future__ import annotations

from typing import Any

from labels.lazy import load

_EXPORTS: dict[str, tuple[str, ...]] = {
    "judges.config": (
        "JudgeConfig",
        "ClaimSplit",
        "ConfigError",
        "load_config",
        "load_builtin",
        "resolve_config",
        "builtin_names",
        "parse_config",
        "config_from_text",
    ),
    "judges.prompts": ("render", "RenderError"),
    "judges.parsing": ("parse_reply", "Verdict", "Unscored", "UNSCORED_REASONS"),
    "judges.providers": (
        "get_provider",
        "register_provider",
        "Provider",
        "CompletionRequest",
        "Completion",
        "ProviderError",
        "ProviderConfigError",
    ),
    "judges.providers.scripted": ("ScriptedProvider",),
    "judges.runner": ("run_judge", "run_judge_async", "RunSummary", "RunJudgeOptions"),
    "judges.run_plan": ("plan_run", "RunPlan", "CostEstimate"),
    "judges.calls": ("CallPolicy",),
    "judges.pricing": ("Price", "DEFAULT_PRICES", "load_prices"),
    "judges.stores.judge_store": ("JudgeStore", "item_hash"),
    "judges.aggregation": ("aggregate_calls", "AGGREGATION_RULES"),
    "judges.verdicts": (
        "judge_verdicts",
        "import_verdicts",
        "export_verdicts",
        "swap_flips",
        "resolve_judge",
        "VERDICT_COLUMNS",
    ),
    "judges.reporting": (
        "calibration_report",
        "judge_leaderboard",
        "load_human_labels",
        "load_judge_items",
        "JudgeReport",
        "Leaderboard",
    ),
    "judges.outputs.card": (
        "JudgeCard", "card_from_report", "export_card", "load_card", "write_card"),
    "judges.outputs.gate": (
        "read_verdicts_file",
        "score_verdicts",
        "score_file",
        "gate",
        "Score",
        "GateResult",
    ),
    "judges.settings": ("Settings",),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    return load(__name__, _WHERE, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
