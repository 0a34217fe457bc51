"""The result screen of a several-candidate run, as a person reads it at 80 columns: the
ranking in words first (who is ahead, by how much, which differences are real, what each
costs), then the tables, every noun counted right."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.preference_words import _holm_lines, _pair_result
from blindtest.stats.pairwise import Tally, pair_table

from candidate_analysis_runs import candidate_run, candidate_schemas


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def _screen(tmp_path: Path, invoke: Any, **options: Any) -> str:
    run = candidate_run(tmp_path, prompts=20, **options)
    result = invoke("analyze", run, "--brief", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_the_ranking_in_words_comes_first_and_every_line_fits_80_columns(
    tmp_path: Path, invoke: Any
) -> None:
    screen = _screen(tmp_path, invoke)
    lines = screen.splitlines()
    too_wide = [line for line in lines if len(line) > 80]
    assert too_wide == []
    assert lines[0].startswith("blindtest: preference, 4 candidates (alpha, beta, gamma, delta)")
    body = "\n".join(lines[3:])
    order = [
        "Ranking, strongest first:",
        "alpha is ahead: against beta, the next, it is preferred in",
        "Cost per 1,000 answers: alpha $",
        "Ranking: strength on the log-odds scale, the mean at 0",
        "Pairs (6 pairs that met",
        "By tag",
        "The unit: a comparison",
    ]
    found = [body.index(text) for text in order]
    assert found == sorted(found)
    assert re.search(r"^  1     alpha ", body, re.MULTILINE)
    assert "Davidson's (1970)" in body


def test_a_reference_run_shows_the_reference_table_instead_of_the_pairs(
    tmp_path: Path, invoke: Any
) -> None:
    screen = _screen(tmp_path, invoke, mode="reference:delta")
    assert "Against the reference delta, each candidate's share" in screen
    assert "Against the reference delta (Wilson 95% interval" in screen
    assert "Pairs (" not in screen
    assert "Ranking: strength on the log-odds scale, delta at 0" in screen


def test_counted_nouns_agree_with_their_number() -> None:
    record = pair_table([Tally("a", "b", 12, 8, 1)]).pairs[0]
    assert _pair_result(record, "a", 0.05) == "won 12 to 8, 1 tie, Holm-adjusted p = 0.50"
    assert _pair_result(record, "b", 0.05).startswith("won 8 to 12, 1 tie")
    one_left = pair_table([Tally("a", "b", 30, 2, 0), Tally("a", "c", 5, 5, 5)])
    words = _holm_lines(one_left)[0]
    assert words.startswith("Real differences after Holm across the 2 pairs that met")
    assert words.endswith("; the other pair is not shown to differ.")
    alone = pair_table([Tally("a", "b", 5, 5, 0)])
    assert _holm_lines(alone) == [
        "No pair differs after Holm across the 1 pair that met (alpha 0.05)."
    ]
