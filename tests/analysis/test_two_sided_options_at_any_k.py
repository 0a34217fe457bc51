"""The options that once existed for two sides only, at any number of candidates: each works for
two candidates whatever the design's form, or is refused with three or more in one line (exit
2, nothing written); none silently does something else.

- ``--ask-each`` (its exact McNemar test) and ``--ask`` (Fisher's test by the preferred
  candidate) compare two candidates: tested between two named candidates as between sides A
  and B; refused by bt-design from three.
- ``--controls`` shows one side of a two-sided design twice: refused for a design of named
  candidates.
- ``--similarity`` is the triangle's and the pair's: refused for a preference design at any k.
- The preference export (``bt-analyze --export-preferences``) writes one row per untied pick
  from the texts the judge saw: it works at any k.
- Style control: its likelihood-ratio test of the style terms is a two-candidate figure; with
  three or more the report says there is none, and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.rundir import artifacts

from conftest import Invoke, files_in
from report_runs import read_report, write_picks

QUESTION = "Is this answer correct?"
REVIEW = "Would you ship either?"


def _dirs(root: Path, k: int, items: int = 12) -> list[Path]:
    """``k`` directories of answers, the n-th candidate's answers n words longer each item."""
    found = []
    for n in range(k):
        folder = root / f"cand-{'abcdefgh'[n]}"
        folder.mkdir()
        for item in range(1, items + 1):
            words = " ".join(["word"] * (3 + n + item % 3))
            (folder / f"item{item:02d}.txt").write_text(f"Answer {item}: {words}.\n")
        found.append(folder)
    return found


def _design(invoke: Invoke, run: Path, dirs: list[Path], *extra: Any) -> Any:
    return invoke("design", run, "--from-dirs", *dirs, "--pairs", "all", "--seed", "k", *extra)


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (("--ask-each", QUESTION), "--ask-each takes two candidates"),
        (("--ask", REVIEW), "--ask takes two candidates"),
        (("--controls", "2"), "--controls is refused with candidates"),
        (("--similarity", "0.3"), "--similarity applies to the triangle and pair protocols"),
    ],
)
def test_an_option_for_two_is_refused_with_three_candidates_in_one_line(
    invoke: Invoke, tmp_path: Path, option: tuple[str, str], words: str
) -> None:
    run = tmp_path / "run"
    result = _design(invoke, run, _dirs(tmp_path, 3), *option)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert words in lines[0]
    assert files_in(run) == []  # nothing written


def test_per_option_questions_are_tested_between_two_named_candidates(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    first, second = _dirs(tmp_path, 2)
    assert _design(invoke, run, [first, second], "--ask-each", QUESTION).exit_code == 0
    assert invoke("generate", run).exit_code == 0
    design = artifacts.load_design(run).design
    # A person who says yes for cand-a's answer wherever it is shown, for cand-b's on every
    # third comparison, and prefers whichever answer is on the left.
    picks = []
    for entry in design["arrangement"]:
        yes = {"cand-a": True, "cand-b": entry["trial"] % 3 == 0}
        answer = {"left": yes[entry["left"]], "right": yes[entry["right"]]}
        picks.append(
            {"trial": entry["trial"], "judge": "amy", "judge_kind": "human", "pick": "left",
             "answers": {QUESTION: answer}}
        )  # fmt: skip
    write_picks(run / artifacts.PICKS, picks)
    analyzed = invoke("analyze", run)
    assert analyzed.exit_code in (0, 1), analyzed.output
    (entry,) = read_report(run)["answers"]
    assert set(entry["sides"]) == {"cand-a", "cand-b"}
    assert entry["sides"]["cand-a"]["yes"] == 12
    assert entry["sides"]["cand-b"]["yes"] == 4
    assert entry["paired"]["yes_a_no_b"] == 8
    assert entry["paired"]["p_value"] == pytest.approx(2 / 2**8)  # exact McNemar, 8 to 0
    assert "yes for cand-a's response only 8, for cand-b's only 0" in entry["statement"]


def test_the_preference_export_writes_a_row_per_untied_pick_at_any_k(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert _design(invoke, run, _dirs(tmp_path, 3)).exit_code == 0
    assert invoke("generate", run).exit_code == 0
    design = artifacts.load_design(run).design
    picks = [
        {"trial": e["trial"], "judge": "amy", "judge_kind": "human",
         "pick": "tie" if e["trial"] % 4 == 0 else "right", "confidence": 0.9}
        for e in design["arrangement"]
    ]  # fmt: skip
    write_picks(run / artifacts.PICKS, picks)
    out = tmp_path / "prefs.jsonl"
    result = invoke("analyze", run, "--export-preferences", out)
    assert result.exit_code in (0, 1), result.output
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    lines = (run / "trials.jsonl").read_bytes().splitlines()
    trials = {t["trial"]: t for t in map(orjson.loads, lines)}
    untied = [p for p in picks if p["pick"] != "tie"]
    assert len(rows) == len(untied) == 27  # 3 pairs x 12 prompts, every fourth a tie
    for row, pick in zip(rows, untied, strict=True):
        shown = trials[pick["trial"]]
        assert (row["chosen"], row["rejected"]) == (shown["options"][1], shown["options"][0])


@pytest.mark.parametrize("k", [2, 3])
def test_style_controls_likelihood_ratio_test_is_for_two_candidates_and_said_so_from_three(
    invoke: Invoke, tmp_path: Path, k: int
) -> None:
    run = tmp_path / "run"
    assert _design(invoke, run, _dirs(tmp_path, k)).exit_code == 0
    assert invoke("generate", run).exit_code == 0
    design = artifacts.load_design(run).design
    # A person whose picks follow neither position nor length exactly.
    picks = [
        {"trial": e["trial"], "judge": "amy", "judge_kind": "human",
         "pick": ("left", "right", "left", "tie", "right")[e["trial"] % 5]}
        for e in design["arrangement"]
    ]  # fmt: skip
    write_picks(run / artifacts.PICKS, picks)
    invoke("analyze", run)
    style = read_report(run)["style_control"]
    assert style["fitted"]
    said = " ".join([*style["lines"], *style["technical"]])
    if k == 2:  # two named candidates: the two-sided model, whose test is withheld here
        # The second candidate's answer is a word longer in every comparison: equal style
        # is outside the data, so the test could not tell style from strength.
        assert style["lr_test"] is None
        assert style["lr_test_withheld"] == "extrapolated"
        assert "No test of the style terms: equal style lies outside the data" in said
    else:
        assert "lr_test" not in style
        assert "no likelihood-ratio test of the style terms" in said
