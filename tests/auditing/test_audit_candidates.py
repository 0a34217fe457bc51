"""bt-audit on a design with several candidates: the tell bots replay every comparison as for
two sides; the length tell is taken per candidate against the candidates it met, with the
prompt as the unit (an exact sign test, Holm across candidates); the census, identity
stripping and checks count each candidate's answers once. audit.json's two-sided shape is
unchanged, and the schema tells the two shapes apart."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import orjson
import pytest

from blindtest.analysis.tells import audit_summary
from blindtest.errors import BadInput
from blindtest.model.picks import Pick
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord

from candidate_runs import add_candidate_answers, offline_candidate_run
from report_runs import cli, numbered_prompts, tokens

NAMES = ("alpha", "beta", "gamma", "delta")
RTOL = 1e-9


def words(prompt_id: str, name: str) -> int:
    """alpha writes 30 words, beta 10, delta 20; gamma's length moves from prompt to prompt
    (some ties with the others)."""
    number = int(prompt_id[1:])
    return {"alpha": 30, "beta": 10, "delta": 20}.get(name, 5 + (number * 7) % 30)


def text(prompt_id: str, name: str) -> str:
    return tokens(f"{prompt_id}{name}", words(prompt_id, name))


def audited(run: Path, *args: Any) -> dict[str, Any]:
    result = cli("audit", run, *args)
    assert result.exit_code == 0, result.stderr
    return artifacts.read_json(run / artifacts.AUDIT, "audit")


def two_sided_p(k: int, n: int) -> float:
    """Exact two-sided binomial p against 1/2 (the symmetric tails), by counting."""
    k, n = int(k), int(n)  # Python integers: 2**n must not overflow
    tail = sum(math.comb(n, i) for i in range(0, min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail) if 2 * k != n else 1.0


def holm_by_hand(p: Sequence[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        out[i] = running
    return out


def expected_tells(design: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    score: dict[tuple[str, str], int] = {}
    for entry in design["arrangement"]:
        pid, left, right = entry["prompt_id"], entry["left"], entry["right"]
        a, b = words(pid, left), words(pid, right)
        score.setdefault((left, pid), 0)
        score.setdefault((right, pid), 0)
        if a != b:
            score[(left, pid)] += 1 if a > b else -1
            score[(right, pid)] += 1 if b > a else -1
    tells: dict[str, dict[str, Any]] = {}
    for name in NAMES:
        mine = [v for (who, _), v in score.items() if who == name]
        longer, shorter = sum(v > 0 for v in mine), sum(v < 0 for v in mine)
        tells[name] = {"prompts": len(mine), "longer": longer, "shorter": shorter}
        tells[name]["p_value"] = two_sided_p(longer, longer + shorter)
    adjusted = holm_by_hand([tells[n]["p_value"] for n in NAMES])
    for name, p in zip(NAMES, adjusted, strict=True):
        tells[name]["p_holm"] = p
    return tells


@pytest.mark.parametrize("mode", ["all", "reference:delta", "sample:3"])
def test_the_length_tell_is_a_sign_test_over_prompts_per_candidate(
    tmp_path: Path, mode: str
) -> None:
    run, design = offline_candidate_run(tmp_path, NAMES, prompts=12, mode=mode)
    add_candidate_answers(run, text)
    document = audited(run)
    assert document["candidates"] == list(NAMES)
    bot = document["bots"]["length"]
    assert bot["unit"] == "prompt"
    expected = expected_tells(design)
    for name in NAMES:
        got = bot["per_candidate"][name]
        want = expected[name]
        assert (got["prompts"], got["longer"], got["shorter"]) == (
            want["prompts"],
            want["longer"],
            want["shorter"],
        )
        assert got["even"] == got["prompts"] - got["longer"] - got["shorter"]
        assert got["p_value"] == pytest.approx(want["p_value"], rel=RTOL)
        assert got["p_holm"] == pytest.approx(want["p_holm"], rel=RTOL)
    top = min(NAMES, key=lambda n: expected[n]["p_holm"])
    assert expected[bot["candidate"]]["p_holm"] == pytest.approx(expected[top]["p_holm"])
    chosen = bot["per_candidate"][bot["candidate"]]
    assert (bot["correct"], bot["n"]) == (chosen["longer"], chosen["longer"] + chosen["shorter"])
    assert bot["p_value"] == pytest.approx(chosen["p_holm"], rel=RTOL)
    # The picks are the bot's over every comparison, as bt-judge's length bot makes them.
    assert len(bot["picks"]) == design["trials"]
    assert document["bots"]["duplicate"]["applicable"] is False


def test_a_candidate_longer_on_every_prompt_is_found_and_comparisons_are_descriptive(
    tmp_path: Path,
) -> None:
    run, design = offline_candidate_run(tmp_path, NAMES, prompts=12, mode="all")
    add_candidate_answers(run, text)
    tell = audited(run)["bots"]["length"]["per_candidate"]["alpha"]
    assert tell["longer"] == 12
    assert tell["shorter"] == 0
    assert tell["p_value"] == pytest.approx(2 / 2**12, rel=RTOL)
    untied = [
        e
        for e in design["arrangement"]
        if "alpha" in (e["left"], e["right"])
        and words(e["prompt_id"], e["left"]) != words(e["prompt_id"], e["right"])
    ]
    # gamma outgrows alpha on p004 and p008 (33 and 31 words): the bot gave alpha 34 of its
    # 36 comparisons, yet alpha is longer on balance on every prompt.
    assert tell["comparisons"] == len(untied) == 36
    assert tell["preferred"] == 34


def test_the_census_counts_each_candidates_answer_once(tmp_path: Path) -> None:
    run, _design = offline_candidate_run(tmp_path, NAMES, prompts=10, mode="all")
    add_candidate_answers(run, text)
    census = audited(run)["census"]
    assert set(census) == set(NAMES)
    for name in NAMES:
        lengths = [words(f"p{i:03d}", name) for i in range(1, 11)]
        assert census[name]["model"] == f"model-{name}"
        assert census[name]["responses"] == 10  # one per prompt, not one per comparison
        assert census[name]["mean_words"] == pytest.approx(np.mean(lengths), rel=RTOL)


def test_identity_stripping_and_checks_are_counted_per_candidate(tmp_path: Path) -> None:
    prompts = numbered_prompts(6, check=lambda i: {"regex": "w1"})
    run, _ = offline_candidate_run(tmp_path, NAMES, prompts=6, mode="all", prompts_list=prompts)
    rows = add_candidate_answers(run, text)
    for row in rows:
        if row["side"] == "gamma":
            row["identity_stripped"] = {"model-gamma": 2}
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=True)
    document = audited(run)
    stripping = document["identity_stripping"]
    assert stripping["shown"] == dict.fromkeys(NAMES, 6)
    assert stripping["mentions"] == {"alpha": 0, "beta": 0, "gamma": 12, "delta": 0}
    assert stripping["responses"] == {"alpha": 0, "beta": 0, "gamma": 6, "delta": 0}
    assert stripping["terms"]["model-gamma"]["mentions"]["gamma"] == 12
    checks = document["checks"]
    assert checks["prompts"] == 6
    assert checks["paired"] is None  # no A and B to pair
    # "w1" is in every answer of more than one word: all of them here.
    assert checks["pass"] == {name: {"passed": 6, "total": 6} for name in NAMES}


def test_show_prints_each_candidate_within_80_columns(tmp_path: Path) -> None:
    run, _ = offline_candidate_run(tmp_path, NAMES, prompts=8, mode="all")
    add_candidate_answers(run, text)
    result = cli("audit", run, "--show")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "length bot per candidate, prompt as the unit (Holm across candidates):"
    assert lines[1].startswith("  alpha preferred on balance on 8 of 8 prompts, p = 0.0078")
    assert [line.split(" (")[0] for line in lines[5:9]] == list(NAMES)
    assert all(len(line) <= 80 for line in lines[:-1])


def test_the_report_summary_carries_the_census_and_the_tell_per_candidate(
    tmp_path: Path,
) -> None:
    run, design = offline_candidate_run(tmp_path, NAMES, prompts=8, mode="all")
    add_candidate_answers(run, text)
    document = audited(run)
    summary = audit_summary(
        cast(DesignRecord, design), document, {"judges": ["ana"], "per_trial": []}
    )
    assert summary is not None
    assert summary["census"] is None  # the two-sided A/B table has nothing to show
    assert list(summary["census_by_candidate"]) == list(NAMES)
    assert summary["census_by_candidate"]["beta"]["mean_words"] == pytest.approx(10.0)
    assert summary["length_by_candidate"] == document["bots"]["length"]["per_candidate"]


def test_the_schema_tells_the_two_shapes_apart(tmp_path: Path) -> None:
    run, _ = offline_candidate_run(tmp_path, NAMES, prompts=4, mode="all")
    add_candidate_answers(run, text)
    document = audited(run)
    artifacts.validate(document, "audit", "audit.json")
    length = dict(document["bots"]["length"])
    del length["per_candidate"]
    broken = document | {"bots": document["bots"] | {"length": length}}
    with pytest.raises(BadInput, match="per_candidate"):
        artifacts.validate(broken, "audit", "audit.json")
    # Without "candidates" the document must be two-sided: sides A and B, nothing else.
    two_sided = {k: v for k, v in document.items() if k != "candidates"}
    with pytest.raises(BadInput, match="census"):
        artifacts.validate(two_sided, "audit", "audit.json")
    golden = Path(__file__).parents[2] / "examples" / "run" / "audit.json"
    artifacts.validate(orjson.loads(golden.read_bytes()), "audit", "audit.json")


# --------------------------------------------------------------------------- size


@pytest.mark.parametrize("mode", ["all", "reference"])
def test_under_no_length_difference_holm_holds_the_familywise_error(mode: str) -> None:
    # Answer lengths i.i.d. across candidates (no candidate writes longer): the per-candidate
    # sign tests, Holm-adjusted, reject anything at alpha in at most alpha of the runs
    # (Monte Carlo bound: 3 standard errors). A test over comparisons instead of prompts
    # would not: a candidate's one answer serves all its comparisons of a prompt.
    rng = np.random.default_rng(20261203)
    runs, prompts, k, alpha = 4000, 20, 5, 0.05
    lengths = rng.integers(20, 200, size=(runs, prompts, k))
    if mode == "all":
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    else:
        pairs = [(0, j) for j in range(1, k)]
    score = np.zeros((runs, prompts, k), dtype=int)
    wins = np.zeros((runs, k), dtype=int)
    met = np.zeros((runs, k), dtype=int)
    for i, j in pairs:
        sign = np.sign(lengths[:, :, i] - lengths[:, :, j])
        score[:, :, i] += sign
        score[:, :, j] -= sign
        wins[:, i] += (sign > 0).sum(axis=1)
        wins[:, j] += (sign < 0).sum(axis=1)
        met[:, i] += (sign != 0).sum(axis=1)
        met[:, j] += (sign != 0).sum(axis=1)
    longer, shorter = (score > 0).sum(axis=1), (score < 0).sum(axis=1)
    n = longer + shorter
    p = np.vectorize(two_sided_p)(np.minimum(longer, shorter), n)
    ranked = np.sort(p, axis=1) * (k - np.arange(k))  # Holm: any rejection iff the first does
    familywise = (ranked[:, 0] <= alpha).mean()
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert familywise <= bound
    if mode == "all":
        naive = np.vectorize(two_sided_p)(np.minimum(wins, met - wins), met)
        naive_familywise = (np.sort(naive, axis=1)[:, 0] * k <= alpha).mean()
        assert naive_familywise > bound  # comparisons as the unit: far too many alarms


def test_the_library_and_the_vectorised_procedure_agree(tmp_path: Path) -> None:
    from blindtest.auditing.build import candidate_length_tells

    _run, design = offline_candidate_run(tmp_path, NAMES, prompts=12, mode="sample:4")
    rng = np.random.default_rng(7)
    sizes = {(f"p{i:03d}", n): int(rng.integers(5, 9)) for i in range(1, 13) for n in NAMES}
    picks = []
    for entry in design["arrangement"]:
        a = sizes[(entry["prompt_id"], entry["left"])]
        b = sizes[(entry["prompt_id"], entry["right"])]
        pick = "tie" if a == b else ("left" if a > b else "right")
        picks.append(Pick(trial=entry["trial"], judge="", pick=pick))
    tells = candidate_length_tells(cast(DesignRecord, design), picks)
    for name in NAMES:
        score: dict[str, int] = {}
        for entry in design["arrangement"]:
            if name not in (entry["left"], entry["right"]):
                continue
            other = entry["right"] if entry["left"] == name else entry["left"]
            mine, theirs = sizes[(entry["prompt_id"], name)], sizes[(entry["prompt_id"], other)]
            score[entry["prompt_id"]] = score.get(entry["prompt_id"], 0) + int(
                np.sign(mine - theirs)
            )
        values = np.array(list(score.values()))
        assert tells[name]["longer"] == int((values > 0).sum())
        assert tells[name]["shorter"] == int((values < 0).sum())
        assert tells[name]["prompts"] == len(values)


def test_show_says_when_length_never_tells_a_candidate_apart(tmp_path: Path) -> None:
    run, _ = offline_candidate_run(tmp_path, NAMES, prompts=3, mode="all")
    add_candidate_answers(run, lambda prompt_id, name: tokens(f"{prompt_id}{name}", 12))
    result = cli("audit", run, "--show")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[1:5] == [
        f"  {name}: length never told it from its opponents (3 prompts)" for name in NAMES
    ]
    document = artifacts.read_json(run / artifacts.AUDIT, "audit")
    bot = document["bots"]["length"]
    assert (bot["candidate"], bot["n"], bot["correct"], bot["p_value"]) == (None, 0, 0, None)
