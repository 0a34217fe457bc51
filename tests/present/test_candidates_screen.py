"""The result screen of a several-candidate run, as a person reads it at 80 columns: the
result in words first (the best set, which candidates are told apart, the ranks the data
allow, what each costs), then the tables, every noun counted right."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.preference_words import _claims_line, _pair_result
from blindtest.stats.pairwise import Tally, pair_table
from blindtest.stats.ranking import outcomes
from blindtest.stats.separation import separate

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
        "The best is one of alpha and beta: no other candidate is shown ahead of them",
        "Told apart (of 6 pairs that met): alpha ahead of gamma (won 18 to 1",
        "Ranks the data allow (95% for all at once): alpha 1-2, beta 1-4",
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
    assert _pair_result(record, "a", 0.05) == "won 12 to 8, 1 tie, adjusted p = 0.50"
    assert _pair_result(record, "b", 0.05).startswith("won 8 to 12, 1 tie")
    # a beats b 30 to 2 and meets c 5 to 5: one claim, and one pair that met left over.
    won = ["a"] * 30 + ["b"] * 2
    rows = [(f"p{n}", "a", "b", w) for n, w in enumerate(won)]
    rows += [(f"p{n}", "a", "c", "a" if n % 2 else "c") for n in range(10)]
    found = separate(outcomes(["a", "b", "c"], rows))
    table = pair_table([Tally("a", "b", 30, 2, 0), Tally("a", "c", 5, 5, 0)])
    words = _claims_line(found, table)[0]
    assert words.startswith("Told apart (of 2 pairs that met): a ahead of b (won 30 to 2, 0 ties")
    assert words.endswith(" The other pair that met is not told apart.")
