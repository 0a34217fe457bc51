"""What the report suggests next follows the result: a channel "can explain" only a positive
result (session 2's note: an inconclusive preference was told "formatting can explain this
result")."""

from __future__ import annotations

from typing import Any, cast

from blindtest.analysis.tells import CENSUS_FIGURES
from blindtest.analysis.wording import next_step
from blindtest.artifact_types import DesignRecord


def _design() -> DesignRecord:
    side = {"model": "m", "base_url": "http://127.0.0.1:1/v1"}
    return cast(
        DesignRecord,
        {
            "protocol": "preference",
            "models": {"A": {**side, "model": "big"}, "B": {**side, "model": "small"}},
            "normalization": {
                "length_band": None,
                "truncate_match": False,
                "strip_formatting": False,
                "launder": None,
            },
            "demo": False,
            "alpha": 0.05,
            "sequential": False,
            "similarity_pd0": None,
            "trials": 40,
            "seed": "s",
        },
    )


def _fields(verdict: str) -> dict[str, Any]:
    census = {
        "A": {**{f: 5.0 for f in CENSUS_FIGURES}, "mean_words": 300.0},
        "B": {**{f: 0.0 for f in CENSUS_FIGURES}, "mean_words": 120.0},
    }
    sentences = ["A length bot explains it."]
    return {"verdict": verdict, "audit": {"census": census, "sentences": sentences}, "pd": {}}


def test_i13_next_step_inconclusive_preference_is_not_explained_by_formatting() -> None:
    step = next_step(_design(), _fields("inconclusive"))
    assert step is not None
    assert step["stage"] == "plan"
    assert "explain" not in step["why"]


def test_i13_next_step_a_preferred_side_names_the_channels_to_close() -> None:
    step = next_step(_design(), _fields("A (big) preferred"))
    assert step is not None
    assert step["stage"] == "design"
    assert "--strip-formatting" in step["args"]
    assert step["why"].startswith("length and formatting can explain this result")


def test_i13_all_ties_technical_line_says_the_win_rate_is_undefined_not_a_question_mark() -> None:
    from blindtest.render import _technical_lines

    report: Any = {
        "protocol": "preference",
        "verdict": "inconclusive",
        "n": 12,
        "wins": 0,
        "losses": 0,
        "ties": 12,
        "pc": {"estimate": None, "lo": 0.0, "hi": 1.0},
    }
    lines = _technical_lines(report)
    assert lines[-1] == "  A's win rate  undefined: no untied comparison"
    assert not any("?" in line for line in lines)
