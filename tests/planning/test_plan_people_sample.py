"""bt-plan --people-sample TOTAL sizes the people's sample beside an LLM judge on every
comparison, with the figures of `blindtest.stats.ppi_plan`."""

from __future__ import annotations

import json

import pytest

from blindtest.stats.ppi_plan import people_sample_row, plan_people_sample

from conftest import Invoke


def test_the_table_has_the_statistics_own_rows_and_the_smallest_sample(invoke: Invoke) -> None:
    done = invoke(
        "plan", "--people-sample", 1000, "--agreement", 0.9, "--width", 0.1,
        "--trials", "50,100", "--json",
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    (found,) = json.loads(done.stdout)
    assert found["total"] == 1000
    expected = [
        people_sample_row(n, total=1000, agreement=0.9, people_tie_rate=0.0, score=0.5).to_dict()
        for n in (50, 100)
    ]
    assert found["rows"] == expected
    plan = plan_people_sample(total=1000, agreement=0.9, people_tie_rate=0.0, width=0.1)
    assert found["plan"] == plan.to_dict()
    assert found["plan"]["n"] == 187


def test_the_planned_score_is_the_tie_share_plus_the_untied_share(invoke: Invoke) -> None:
    done = invoke(
        "plan", "--people-sample", 200, "--agreement", 0.7, "--ties", 0.2, "--true", 0.6,
        "--margin", 0.05, "--power", 0.8, "--trials", "30", "--json",
    )  # fmt: skip
    (row,) = json.loads(done.stdout)[0]["rows"]
    assert row["score"] == pytest.approx(0.1 + 0.8 * 0.6)
    assert row["margin"] == 0.05


def test_the_screen_says_width_power_and_what_the_judge_adds(invoke: Invoke) -> None:
    done = invoke(
        "plan", "--people-sample", 200, "--agreement", 0.7, "--ties", 0.2, "--margin", 0.05,
        "--power", 0.8,
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    text = done.stdout
    assert text.startswith("People on a sample, an LLM judge on all 200 comparisons")
    assert " people   width  people alone  judge worth   power  people alone" in text
    assert "Pre-register the sample with bt-design --people-sample N." in " ".join(text.split())


def test_without_an_agreement_or_with_a_decision_it_is_refused(invoke: Invoke) -> None:
    bare = invoke("plan", "--people-sample", 200)
    assert bare.exit_code == 2
    assert "give --agreement (e.g. 0.7)" in bare.stderr
    both = invoke("plan", "--people-sample", 200, "--agreement", 0.7, "--decide", "superior")
    assert both.exit_code == 2
    assert "--people-sample plans the people's sample alone: drop --decide" in both.stderr
    no_margin = invoke("plan", "--people-sample", 200, "--agreement", 0.7, "--power", 0.8)
    assert no_margin.exit_code == 2
    assert "needs --margin" in no_margin.stderr
