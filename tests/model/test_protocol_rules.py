"""Protocols carry their rules: how a pick scores, what a pick may be, what a judge is asked,
the plan's chance and power model, and the options each protocol allows live on the
`blindtest.model.protocols.Protocol` objects; the modules that use a rule read it there, so a new
protocol is one more object, and branches on a protocol's name elsewhere stay few (a ceiling
below, each remaining place with its reason)."""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from blindtest.judging.llm import prompts as llm_prompts
from blindtest.judging.llm import verdicts
from blindtest.judging.terminal import layout, questions
from blindtest.model import protocols, scoring
from blindtest.model.protocols import PROTOCOLS, TRIANGLE, Protocol
from blindtest.planning import rows as planning
from blindtest.present import render

from report_runs import make_design

PACKAGE = Path(__file__).resolve().parents[2] / "blindtest"

_NAME = r"(?:triangle|pair|preference)"
#: A branch on a protocol's name: a comparison with (or membership in) a literal name, or a
#: table keyed by the names.
BRANCH = (
    re.compile(r"protocol\w*\b[\"'\]]*\)?\s*(?:==|!=|not in|in)\s*[(\[{]?\s*[\"']"),
    re.compile(r"(?:==|!=)\s*[\"']" + _NAME + r"[\"']"),
    re.compile(r"[\"']" + _NAME + r"[\"']\s*(?:==|!=)"),
    re.compile(r"[\"']" + _NAME + r"[\"']\s*:\s"),
)
LOOP = re.compile(r"\bfor\s+\w*protocol\w*\s+in\b")

#: The places outside blindtest/model/protocols.py that still name protocols, and why. A new one
#: should read a rule from the Protocol object instead (or add the rule there).
ALLOWED: dict[str, tuple[int, str]] = {
    "stats/power.py": (
        5,
        "the power of each statistical model: stats sits below blindtest.model.protocols and takes "
        "the model's name (Protocol.model) as its public API",
    ),
    "stats/similarity.py": (
        2,
        "the similarity test of each model (GUESS, one-sided against two one-sided), as "
        "stats/power.py",
    ),
    "stats/decision.py": (
        2,
        "similar:PD0, the similarity decision of each model (triangle or pair), as "
        "stats/similarity.py",
    ),
    "stats/sizing.py": (
        2,
        "the similarity claim's power and n for each model, as stats/power.py",
    ),
    "analysis/report.py": (
        2,
        "ANALYSES: the analysis entry point of each protocol that tells two sides apart, one "
        "table keyed by name, because it imports the whole analysis, which "
        "blindtest.model.protocols cannot (preference, for any k, is Protocol.prefers)",
    ),
    "reportfmt.py": (
        3,
        "TESTS names the test behind each p-value (five tests: three are named like the "
        "protocol whose analysis runs them, the others are sequential, panel, pair_panel)",
    ),
    "analysis/preference.py": (1, "the report field named 'preference', not a branch"),
    "judging/llm/verdicts.py": (
        1,
        "_QUICK is keyed by the verdict's fields, one of them named 'preference'",
    ),
    "simulator/judging.py": (
        2,
        "the simulated LLM judge writes the verdict field 'preference' of the prompt's JSON",
    ),
}


def branches() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*")):
        name = path.relative_to(PACKAGE).as_posix()
        if path.suffix not in (".py", ".html", ".js") or name == "model/protocols.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not LOOP.search(line) and any(p.search(line) for p in BRANCH):
                found.setdefault(name, []).append(f"{number}: {line.strip()}")
    return found


def test_branches_on_protocol_names_stay_in_their_few_places() -> None:
    found = branches()
    extra = {
        name: lines for name, lines in found.items() if len(lines) > ALLOWED.get(name, (0, ""))[0]
    }
    assert not extra, (
        "a rule that differs by protocol belongs on blindtest.model.protocols.Protocol; read it "
        f"there instead of comparing names: {extra}"
    )
    # The ceiling is tight: a place that no longer branches leaves the list.
    assert {name: len(lines) for name, lines in found.items()} == {
        name: count for name, (count, _) in ALLOWED.items()
    }


def test_the_branch_counter_finds_each_form() -> None:
    lines = [
        'if view.protocol == "pair":',
        'if design["protocol"] != "triangle":',
        'if protocol in ("pair", "preference"):',
        '    "triangle": 210,',
        'x = "preference" == kind',
    ]
    assert all(any(p.search(line) for p in BRANCH) for line in lines)
    for line in ("for protocol in PROTOCOLS:", "if protocol not in PROTOCOLS:"):
        assert LOOP.search(line) or not any(p.search(line) for p in BRANCH)


def _fraction(words: str) -> Fraction:
    """ "1/3" or "50%" as a fraction."""
    if words.endswith("%"):
        return Fraction(int(words[:-1]), 100)
    return Fraction(words)


@pytest.mark.parametrize("rules", PROTOCOLS.values(), ids=list(PROTOCOLS))
def test_each_protocol_states_every_rule_consistently(rules: Protocol) -> None:
    assert PROTOCOLS[rules.name] is rules
    assert len({rules, dataclasses.replace(rules)}) == 1
    assert len(rules.labels) == rules.options
    assert math.isclose(float(_fraction(rules.chance_words)), rules.chance)
    assert rules.plan_chance.startswith(f"{Fraction(rules.chance).limit_denominator(10)},")
    assert rules.plan_chance.endswith("two-sided" if rules.two_sided else "one-sided")
    assert rules.alternative == ("two-sided" if rules.two_sided else "greater")
    assert rules.question.endswith("?")
    assert rules.task
    assert rules.title
    assert all(rules.chance < float(pc) <= 1 for pc in rules.default_pcs)
    assert rules.side_by_side_from >= 65 * rules.options
    # Each kind of pick has its domain: every pick the protocol lists is in range, and a
    # value of another kind is not.
    for pick in rules.picks or ("fox", "owl"):
        assert rules.pick_problem(pick) is None
    for wrong in (0, rules.options + 1, "", True, 2.0):
        assert rules.pick_problem(wrong) is not None  # type: ignore[arg-type]
    if rules.pick_kind != "position":
        assert rules.pick_problem(1) is not None
    if rules.pick_kind == "nickname":
        assert rules.pick_problem("tie") is not None
        assert rules.pick_problem("fo\x07x") is not None


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_the_tally_is_the_scoring_every_stage_used(name: str) -> None:
    design = make_design(name, 24)
    rules = protocols.protocol_of(design)
    for entry in design["arrangement"]:
        trial = entry["trial"]
        for pick in rules.picks or ("fox", "owl"):
            tally = rules.tally(entry, pick, "fox")
            if rules.pick_kind == "position":
                assert tally == scoring.triangle_correct(design, trial, pick)
            elif rules.pick_kind == "nickname":
                assert tally == scoring.pair_consistent(design, trial, pick, "fox")
            else:
                side = scoring.preferred_side(design, trial, pick)
                assert tally == (None if side is None else side == "A")


def _variant(monkeypatch: pytest.MonkeyPatch) -> Protocol:
    """A protocol no module names: the triangle's statistics under other words."""
    variant = dataclasses.replace(
        TRIANGLE,
        name="triad",
        question="Which response stands apart?",
        title="triad test",
        unit="hits",
        unit_words="hits",
        default_pcs=("0.55", "0.65"),
    )
    monkeypatch.setitem(PROTOCOLS, variant.name, variant)
    return variant


def test_a_new_protocol_object_reaches_the_design_plan_and_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variant = _variant(monkeypatch)
    design = make_design(variant.name, 12)
    assert design["judging"]["question"] == variant.question
    assert all("odd_position" in entry for entry in design["arrangement"])
    assert [variant.slot_sides(e) for e in design["arrangement"]] == [
        TRIANGLE.slot_sides(e) for e in design["arrangement"]
    ]

    plan = planning.build_plan(variant.name, [20], alpha=0.05)
    same = planning.build_plan("triangle", [20], alpha=0.05, pcs=variant.default_pcs)
    assert [v.text for v in plan.values] == list(variant.default_pcs)
    assert plan.rows == same.rows
    text = planning.format_plan(plan)
    assert text.startswith("triad design, exact binomial against chance 1/3, one-sided")
    assert f"{plan.rows[0]['critical']} hits" in text

    report = {"protocol": variant.name, "verdict": "distinguished", "n": 20, "correct": 14}
    assert "  14 of 20 hits" in render._technical_lines(report)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_the_screens_and_the_llm_judge_read_the_protocol(name: str) -> None:
    rules = PROTOCOLS[name]
    assert questions.help_text(name, sequential=False)[0] == rules.task
    assert layout.side_by_side(name, rules.side_by_side_from - 1)
    assert not layout.side_by_side(name, rules.side_by_side_from - 2)
    assert len(layout.option_labels(name)) == rules.options
    for pick in rules.picks or ():
        typed = str(pick) if rules.pick_kind == "position" else str(pick)[0]
        assert questions.parse_answer(name, typed, None) == pick
    schema = verdicts.VERDICT_SCHEMAS[name]
    assert schema["required"][: len(rules.llm.required)] == list(rules.llm.required)
    assert rules.llm.verdict in schema["properties"]
    assert all(llm_prompts.bundled(template) for template in rules.llm.templates)


def test_a_new_protocol_object_reaches_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    variant = dataclasses.replace(
        _variant(monkeypatch), task="Find the response that stands apart.", unsure=""
    )
    monkeypatch.setitem(PROTOCOLS, variant.name, variant)
    assert questions.help_text(variant.name, sequential=False)[0] == variant.task
    assert questions.parse_answer(variant.name, "2", None) == 2
    assert questions.answer_keys(variant.name, None) == "1, 2 or 3"
    assert variant.pick_problem(4) == "pick 4 is out of range for a triad run (1, 2 or 3)"
