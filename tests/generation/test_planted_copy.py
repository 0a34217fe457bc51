"""The sensitivity check's degraded copy: each degradation does what docs/judging.md says, is
drawn from the design seed, is made from the champion's fetched answer when trials.jsonl is
built (no model call), and bt-verify re-derives it."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from blindtest.model.planted import (
    DEGRADATIONS,
    _sentences,
    applied_degradation,
    degrade,
    degraded_position,
)
from blindtest.simulator import Simulator

from conftest import Invoke, numbered_prompts

ANSWER = (
    "Caching comes down to a few choices. Start with the budget, since everything builds on "
    "it. Measure quality before changing it. Keep it simple until there is evidence.\n\n"
    "1. Write down what the goal means.\n2. Compare two options side by side.\n\n"
    "In short, get the budget right first."
)


def words(text: str) -> list[str]:
    return text.split()


def test_cut_keeps_the_first_40_to_60_percent_of_the_words() -> None:
    for trial in range(1, 60):
        copy = degrade(ANSWER, "cut", "seed", trial)
        kept = words(copy)
        assert words(ANSWER)[: len(kept)] == kept
        assert 0.4 <= len(kept) / len(words(ANSWER)) <= 0.6 + 1 / len(words(ANSWER))


def test_drop_leaves_out_a_third_of_the_sentences_never_the_first() -> None:
    sentences = [s.strip() for s in _sentences(ANSWER)]
    for trial in range(1, 40):
        kept = [s.strip() for s in _sentences(degrade(ANSWER, "drop", "seed", trial))]
        assert kept[0] == sentences[0]
        assert len(kept) == len(sentences) - len(sentences) // 3
        assert [s for s in sentences if s in kept] == kept  # the others, in order


def test_shuffle_keeps_every_sentence_in_another_order() -> None:
    sentences = sorted(s.strip() for s in _sentences(ANSWER))
    for trial in range(1, 40):
        copy = degrade(ANSWER, "shuffle", "seed", trial)
        moved = [s.strip() for s in _sentences(copy)]
        assert sorted(moved) == sentences
        assert copy != ANSWER
        assert copy.count("\n") == ANSWER.count("\n")  # the layout stays


def test_a_list_number_belongs_to_its_sentence() -> None:
    assert "2. Compare two options side by side.\n\n" in _sentences(ANSWER)


def test_the_copy_is_drawn_from_the_seed_and_the_trial() -> None:
    assert degrade(ANSWER, "drop", "a", 3) == degrade(ANSWER, "drop", "a", 3)
    copies = {degrade(ANSWER, "shuffle", seed, trial) for seed in "ab" for trial in (1, 2, 3)}
    assert len(copies) > 3


@pytest.mark.parametrize(
    ("text", "how", "applied"),
    [
        ("One sentence with enough words here.", "drop", "cut"),
        ("Two short sentences here. And a second.", "shuffle", "cut"),
        ("Too short.", "cut", "none"),
        (ANSWER, "shuffle", "shuffle"),
    ],
)
def test_short_answers_are_cut_instead(text: str, how: str, applied: str) -> None:
    assert applied_degradation(text, how) == applied
    copy = degrade(text, how, "s", 1)
    assert (copy == text) == (applied == "none")


def test_an_unknown_degradation_is_refused() -> None:
    with pytest.raises(ValueError, match="degradation must be one of cut, drop, shuffle"):
        applied_degradation(ANSWER, "blur")


def test_the_planted_copy_is_made_from_the_fetched_answer_and_reverified(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    url = simulator.base_url
    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(numbered_prompts(30)) + "\n")
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", url, "--b-url", url, "--protocol", "preference", "--trials", "12",
        "--seed", "planted", "--decide", "noninferior:0.05", "--sensitivity", "9", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.stderr
    design = orjson.loads((run / "design.json").read_bytes())
    rows = [orjson.loads(line) for line in (run / "responses.jsonl").read_bytes().splitlines()]
    assert len(rows) == 12 * 2 + 9  # one answer per planted comparison: the copy is not asked
    trials = [orjson.loads(line) for line in (run / "trials.jsonl").read_bytes().splitlines()]
    assert all(set(t) <= {"schema", "trial", "prompt", "options", "history"} for t in trials)
    answers = {(r["trial"], r["slot"]): r["text"] for r in rows}
    seen: Counter[str] = Counter()
    for entry in design["arrangement"]:
        planted = entry.get("planted")
        if planted is None:
            continue
        options = trials[entry["trial"] - 1]["options"]
        original = answers[(entry["trial"], planted["original"])]
        assert options[planted["original"] - 1] == original
        copy = options[degraded_position(planted) - 1]
        assert copy == degrade(original, planted["degradation"], "planted", entry["trial"])
        assert copy != original
        assert rows[0]["side"] in ("A", "B")
        seen[planted["degradation"]] += 1
    assert set(seen) <= set(DEGRADATIONS)
    assert invoke("verify", run).exit_code == 0
    # A copy changed by hand is a difference bt-verify names.
    path = run / "trials.jsonl"
    text = path.read_text()
    first = next(e for e in design["arrangement"] if "planted" in e)
    lines = text.splitlines(keepends=True)
    record = orjson.loads(lines[first["trial"] - 1])
    record["options"][degraded_position(first["planted"]) - 1] += " tampered"
    lines[first["trial"] - 1] = orjson.dumps(record).decode() + "\n"
    path.write_text("".join(lines))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert re.search(rf"trials.jsonl/{first['trial'] - 1}/options", verified.stdout)
