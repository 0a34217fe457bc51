"""The suggested next bt-design command (after an analysis that a channel can explain) carries
the identity stripping the design used: ``--no-strip-identity`` when it was off, and
``--strip-identity-words IDENTITY-WORDS`` when a word file added terms. The design records the
terms, not the file's name, so the file is a placeholder the legend explains, like PROMPTS."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from blindtest.analysis.tells import CENSUS_FIGURES
from blindtest.analysis.wording import next_step
from blindtest.model.identity import added_terms, identity_config
from blindtest.present.hints import placeholder_legend
from blindtest.present.page import sections
from blindtest.rundir.types import DesignRecord
from blindtest.simulator import Simulator

from conftest import Invoke
from screen_text import flat

LEGEND = "IDENTITY-WORDS: your --strip-identity-words file (its terms are in design.json)"


def _design(identity: dict[str, Any] | None, label: str | None = None) -> DesignRecord:
    side = {"base_url": "http://127.0.0.1:1/v1"}
    normalization: dict[str, Any] = {
        "length_band": None,
        "truncate_match": False,
        "strip_formatting": False,
        "launder": None,
    }
    if identity is not None:
        normalization["identity_strip"] = identity
    a = {**side, "model": "acme/big-1"} | ({"label": label} if label else {})
    return cast(
        DesignRecord,
        {
            "protocol": "preference",
            "models": {"A": a, "B": {**side, "model": "small"}},
            "normalization": normalization,
            "demo": False,
            "alpha": 0.05,
            "sequential": False,
            "similarity_pd0": None,
            "trials": 40,
            "seed": "s",
        },
    )


def _explained() -> dict[str, Any]:
    """Analysis fields a formatting gap explains: the next step is a new design."""
    census = {
        "A": {**{f: 5.0 for f in CENSUS_FIGURES}, "mean_words": 300.0},
        "B": {**{f: 0.0 for f in CENSUS_FIGURES}, "mean_words": 120.0},
    }
    return {
        "verdict": "A (big) preferred",
        "audit": {"census": census, "sentences": ["A length bot explains it."]},
        "pd": {},
    }


def _args(design: DesignRecord) -> list[str]:
    step = next_step(design, _explained())
    assert step is not None
    assert step["stage"] == "design"
    return [str(a) for a in step["args"]]


NAMES = ["acme/big-1", "small"]


def test_next_design_carries_the_word_file_as_a_placeholder_when_it_added_terms() -> None:
    record = identity_config(True, ["Acme Labs", "!Claude Shannon"], NAMES)
    args = _args(_design(record))
    at = args.index("--strip-identity-words")
    assert args[at + 1] == "IDENTITY-WORDS"
    assert "--no-strip-identity" not in args
    assert placeholder_legend(args) == (
        f"(PROMPTS: your prompts file; {LEGEND}; NEW-RUN: a new run directory)"
    )


@pytest.mark.parametrize(
    ("record", "label"),
    [
        (identity_config(True, [], NAMES), None),  # the default: bundled list and names
        (identity_config(True, [], [*NAMES, "prod"]), "prod"),  # a label is a name, not a word
        (identity_config(True, ["OpenAI"], NAMES), None),  # a bundled term adds nothing
        (None, None),  # a design made before identity stripping
    ],
)
def test_next_design_names_no_word_file_when_none_added_terms(
    record: dict[str, Any] | None, label: str | None
) -> None:
    args = _args(_design(record, label))
    assert "--strip-identity-words" not in args
    assert "--no-strip-identity" not in args
    assert "IDENTITY-WORDS" not in placeholder_legend(args)


def test_next_design_carries_no_strip_identity_when_stripping_was_off() -> None:
    args = _args(_design(identity_config(False, [], NAMES)))
    assert "--no-strip-identity" in args
    assert "--strip-identity-words" not in args


def test_next_design_added_terms_are_the_word_file_s_terms_and_exceptions() -> None:
    record = identity_config(True, ["Acme Labs", "!Gemini"], NAMES)
    assert sorted(added_terms(record, NAMES)) == ["!Gemini", "Acme Labs"]
    assert added_terms(identity_config(False, ["Acme Labs"], NAMES), NAMES) == []


def test_next_design_with_word_file_on_the_screen_and_the_page_and_the_command_works(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    url = simulator.base_url
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("".join(f"Who are you? Explain topic {i} briefly.\n" for i in range(30)))
    words = tmp_path / "words.txt"
    words.write_text("# our lab\nAcme Labs\n")
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small", "--a-url",
        url, "--b-url", url, "--protocol", "preference", "--trials", 30, "--seed", "next-words",
        "--strip-identity-words", words,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    assert invoke("audit", run).exit_code == 0
    analyzed = invoke("analyze", run)
    assert analyzed.exit_code in (0, 1), analyzed.output
    report = orjson.loads((run / "report.json").read_bytes())
    assert report["next"]["stage"] == "design", report["next"]
    args = report["next"]["args"]
    assert args[args.index("--strip-identity-words") + 1] == "IDENTITY-WORDS"
    assert "--strip-identity-words IDENTITY-WORDS" in analyzed.stdout  # the command, whole
    assert LEGEND in flat(analyzed.stdout)  # prose: wrapped to the screen
    assert LEGEND in (sections.next_step(report) or {})["legend"]

    # The command, placeholders filled in as the legend says, makes the same identity record.
    again = tmp_path / "again"
    filled = {"NEW-RUN": again, "PROMPTS": prompts, "IDENTITY-WORDS": words}
    made = invoke("design", *[filled.get(a, a) for a in args])
    assert made.exit_code == 0, made.output
    first = orjson.loads((run / "design.json").read_bytes())["normalization"]["identity_strip"]
    second = orjson.loads((again / "design.json").read_bytes())["normalization"]["identity_strip"]
    assert second == first
