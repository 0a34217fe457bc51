"""hidden control trials (``bt-design --controls K``, preference). A control
shows two independent draws of one model; controls are interleaved among the real trials,
indistinguishable before judging, left out of the A-vs-B test and reported per judge."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.designing.build import build_arrangement
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from endpoint_fixtures import through_batch_api
from screen_text import flat


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def design(invoke: Invoke, run: Path, url: str, *extra: Any, trials: int = 10) -> Any:
    return invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", trials,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url,
        "--seed", "i13-controls", *extra,
    )  # fmt: skip


def made(invoke: Invoke, run: Path, url: str, *extra: Any, trials: int = 10) -> Path:
    result = design(invoke, run, url, *extra, trials=trials)
    assert result.exit_code == 0, result.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(path.read_bytes())
    return loaded


def one_line_refusal(result: Any, run: Path, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1, result.stderr
    for word in words:
        assert word in result.stderr
    assert not run.exists() or not any(run.iterdir())


# ---------------------------------------------------------------------- bt-design --controls


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_controls_refused_outside_preference_exit_2_one_line_nothing_written(
    invoke: Invoke, tmp_path: Path, protocol: str
) -> None:
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--demo", "--protocol", protocol, "--controls", "2", "--seed", "s"
    )
    one_line_refusal(result, run, "--controls is for preference designs only")


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--controls", "-1"), "--controls must be 0 or more, got -1"),
        (("--controls", "11"), "--controls 11 is more than the 10 real trials"),
        (("--controls", "4", "--temperature", "0"), "refused at temperature 0"),
        (("--controls", "4", "--b-temperature", "0"), "(side B)"),
        (("--controls", "31", "--trials", "31"), "need 31 + 31 controls = 62"),
    ],
)
def test_design_refuses_a_bad_k_exit_2_one_line_nothing_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, extra: tuple[str, ...], says: str
) -> None:
    run = tmp_path / "run"
    result = design(invoke, run, simulator.base_url, *extra)
    one_line_refusal(result, run, says)


def test_controls_refused_with_from_dirs(invoke: Invoke, tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        for item in range(4):
            (tmp_path / name / f"item{item}.txt").write_text(f"{name} answer {item}\n")
    run = tmp_path / "run"
    result = invoke(
        "design", run, "--from-dirs", tmp_path / "a", tmp_path / "b", "--protocol",
        "preference", "--trials", "2", "--controls", "1", "--seed", "s",
    )  # fmt: skip
    one_line_refusal(result, run, "--from-dirs supplies one output")


def test_zero_controls_is_the_old_design_byte_for_byte(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    plain, zero = tmp_path / "plain", tmp_path / "zero"
    assert design(invoke, plain, simulator.base_url).exit_code == 0
    assert design(invoke, zero, simulator.base_url, "--controls", "0").exit_code == 0
    assert "controls" not in load(zero / artifacts.DESIGN)
    assert (plain / artifacts.DESIGN_HASH).read_bytes() == (
        zero / artifacts.DESIGN_HASH
    ).read_bytes()


def test_arrangement_is_deterministic_interleaved_and_balanced() -> None:
    ids = [f"p{i:03d}" for i in range(60)]
    assert build_arrangement("s", 20, ids, "preference", 0) == build_arrangement(
        "s", 20, ids, "preference"
    )
    interleaved = 0
    for seed in [f"seed-{i}" for i in range(40)]:
        first = build_arrangement(seed, 30, ids, "preference", 10)
        assert first == build_arrangement(seed, 30, ids, "preference", 10)  # a pure function
        assert [e["trial"] for e in first] == list(range(1, 31))
        controls = [e for e in first if "control" in e]
        real = [e for e in first if "control" not in e]
        assert len(controls) == 10
        assert len(real) == 20
        assert Counter(e["control"] for e in controls) == {"A": 5, "B": 5}
        assert Counter(e["left"] for e in real) == {"A": 10, "B": 10}
        assert all(e["left"] == e["control"] for e in controls)
        assert len({e["prompt_id"] for e in first}) == 30  # each prompt once, controls too
        numbers = [e["trial"] for e in controls]
        interleaved += numbers != list(range(21, 31))  # not appended at the end
        assert min(numbers) < 21 or max(numbers) < 30
    assert interleaved == 40
    # An odd K: one side draws the extra control; counts differ by one at most.
    odd = build_arrangement("odd", 13, ids, "preference", 3)
    sides = Counter(e["control"] for e in odd if "control" in e)
    assert sum(sides.values()) == 3
    assert abs(sides["A"] - sides["B"]) == 1


def _rederive(seed: str, total: int, ids: list[str], k: int) -> list[tuple[str, str, str]]:
    """(prompt, left, control or "") per trial, from the README's Randomization paragraph only."""

    def words(label: str) -> Iterator[int]:
        block = 0
        while True:
            digest = hashlib.sha256(
                b"blindtest/rng@1\x00" + seed.encode() + b"\x00" + label.encode() + b"\x00"
                + str(block).encode()
            ).digest()  # fmt: skip
            for i in range(4):
                yield int.from_bytes(digest[8 * i : 8 * i + 8], "big")
            block += 1

    def below(stream: Iterator[int], n: int) -> int:
        for word in stream:
            if word < 2**64 - 2**64 % n:
                return word % n
        raise AssertionError

    def shuffle(stream: Iterator[int], xs: list[Any]) -> None:
        for i in range(len(xs) - 1, 0, -1):
            j = below(stream, i + 1)
            xs[i], xs[j] = xs[j], xs[i]

    def balanced(label: str, n: int) -> list[str]:
        stream = words(label)
        sides = ["A", "B"] * (n // 2) + (["AB"[below(stream, 2)]] if n % 2 else [])
        shuffle(stream, sides)
        return sides

    order = list(range(len(ids)))
    shuffle(words("prompts"), order)
    numbers = list(range(1, total + 1))
    shuffle(words("controls"), numbers)
    control = dict(zip(sorted(numbers[:k]), balanced("control_sides", k), strict=True))
    left = iter(balanced("left", total - k))
    return [
        (ids[order[t - 1]], control[t] if t in control else next(left), control.get(t, ""))
        for t in range(1, total + 1)
    ]


def test_arrangement_rederives_from_the_readme_alone() -> None:
    ids = [f"p{i}" for i in range(1, 41)]
    for seed in ["golden", "naïve seed ✓", *map(str, range(30))]:
        for real, k in ((1, 1), (6, 2), (20, 5), (15, 15), (7, 0)):
            ours = build_arrangement(seed, real + k, ids, "preference", k)
            shown = [(e["prompt_id"], e["left"], e.get("control", "")) for e in ours]
            assert shown == _rederive(seed, real + k, ids, k)


def test_design_records_k_and_the_total_and_prints_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    result = design(invoke, run, simulator.base_url, "--controls", "4")
    assert result.exit_code == 0, result.output
    assert "10 trials + 4 hidden controls from 40 prompts" in result.stderr
    recorded = load(run / artifacts.DESIGN)
    assert recorded["trials"] == 14
    assert recorded["controls"] == 4
    assert sum("control" in e for e in recorded["arrangement"]) == 4


# ------------------------------------------------------------------------------- the blind


def _shape(value: Any) -> Any:
    """The form of a JSON value: its keys and types, not its text."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def test_trials_jsonl_and_generate_output_do_not_tell_controls_apart(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    with_controls, without = tmp_path / "one", tmp_path / "two"
    url = simulator.base_url
    assert design(invoke, with_controls, url, "--controls", "4").exit_code == 0
    assert design(invoke, without, url, trials=14).exit_code == 0
    said = {run: invoke("generate", run) for run in (with_controls, without)}
    for result in said.values():
        assert result.exit_code == 0, result.output

    def form(text: str) -> str:
        return re.sub(r"\d+", "N", text.replace(str(with_controls), "RUN").replace(
            str(without), "RUN"))  # fmt: skip

    # What bt-generate prints has the same form with and without controls, and names none.
    assert form(said[with_controls].stdout) == form(said[without].stdout)
    assert form(said[with_controls].stderr) == form(said[without].stderr)
    assert "control" not in said[with_controls].output.lower()
    # trials.jsonl: the same fields and types on every row, controls included; no field or
    # text says which rows are controls.
    shown = lines(with_controls / artifacts.TRIALS)
    recorded = load(with_controls / artifacts.DESIGN)
    controls = {e["trial"] for e in recorded["arrangement"] if "control" in e}
    assert len(shown) == 14
    assert len(controls) == 4
    shapes = {orjson.dumps(_shape(row)) for row in shown}
    assert len(shapes) == 1
    assert shapes == {orjson.dumps(_shape(row)) for row in lines(without / artifacts.TRIALS)}
    assert b"control" not in (with_controls / artifacts.TRIALS).read_bytes().lower()
    # A control's two options are independent draws: each slot had its own seed and text.
    responses = lines(with_controls / artifacts.RESPONSES)
    for trial in controls:
        slots = [r for r in responses if r["trial"] == trial]
        assert {r["side"] for r in slots} == {next(
            e["control"] for e in recorded["arrangement"] if e["trial"] == trial)}  # fmt: skip
        assert len({r["seed"] for r in slots}) == 2
    assert all(row["options"][0] != row["options"][1] for row in shown)


def test_generation_counts_a_controls_slots_as_its_sides_outputs(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4")
    recorded = load(run / artifacts.DESIGN)
    sides = Counter(e["control"] for e in recorded["arrangement"] if "control" in e)
    roles = load(run / artifacts.GENERATION)["roles"]
    for side in ("A", "B"):  # 10 real trials give each side 10; a control 2 to its side
        assert roles[side]["responses"] == 10 + 2 * sides[side]


def test_batch_export_and_import_with_controls_equal_a_live_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    live = made(invoke, tmp_path / "live", simulator.base_url, "--controls", "4")
    batch = tmp_path / "batch"
    assert design(invoke, batch, simulator.base_url, "--controls", "4").exit_code == 0
    out = tmp_path / "batch.jsonl"
    assert invoke("generate", batch, "--batch-export", out).exit_code == 0
    assert len(lines(out)) == 28
    assert b"control" not in out.read_bytes().lower()
    output, errors = through_batch_api(simulator, out.read_bytes())
    assert errors == b""
    results = tmp_path / "results.jsonl"
    results.write_bytes(output)
    imported = invoke("generate", batch, "--batch-import", results)
    assert imported.exit_code == 0, imported.stderr
    assert (batch / artifacts.TRIALS).read_bytes() == (live / artifacts.TRIALS).read_bytes()
    assert invoke("verify", batch).exit_code == 0


# ---------------------------------------------------------------------- judging and analysis


def test_always_first_llm_judge_controls_excluded_and_left_share_near_1(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "6")
    judged = invoke(
        "judge", run, "--judge", "llm:sim-judge-first", "--judge-url", simulator.base_url
    )
    assert judged.exit_code == 0, judged.output
    assert "judged 16 of 16 trials" in judged.stdout
    assert invoke("audit", run).exit_code == 0
    analysed = invoke("analyze", run)
    report = load(run / artifacts.REPORT)
    controls = {e["trial"] for e in load(run / artifacts.DESIGN)["arrangement"] if "control" in e}
    # The main test: the 10 real trials only.
    assert report["n"] == 10
    assert report["trials_planned"] == 10
    assert {r["trial"] for r in report["per_trial"]}.isdisjoint(controls)
    assert len(report["per_trial"]) == 10
    # The position gate reads the controls' passes beside the real ones (every pass shown
    # first: a left share of 1 in each of the 16 comparisons).
    bias = report["position_bias"]
    assert (bias["comparisons"], bias["controls"], bias["verdict"]) == (16, 6, "fail")
    machine = report["llm_judges"]["judges"][0]
    assert machine["comparisons"] == 10  # its diagnostics are about the real trials
    # The controls, per judge and by comparison (both passes of the swap are one verdict):
    # the first position every time, an exact test over the 6 comparisons that says so; the
    # passes always disagreed, so no control comparison was a preference (a tie, as on the
    # real trials).
    found = report["controls"]["judges"][0]
    assert found["judge"] == "sim-judge-first"
    assert found["judge_kind"] == "llm"
    assert found["controls"] == 6
    assert found["verdicts"] == 12
    assert found["position"]["first"] == 6
    assert found["share_left"] == 1.0
    assert found["left"] == 6
    assert found["non_tie"] == 0
    assert found["share_non_tie"] == 0.0
    assert found["p_value"] == pytest.approx(2 / 64)
    assert found["interval"]["lo"] == pytest.approx(0.025 ** (1 / 6))  # Clopper-Pearson, 6 of 6
    assert "a preference for a position, not for a response" in found["statement"]
    assert machine["controls"]["share_left"] == 1.0  # also in its diagnostics (item 8)
    assert [t["trial"] for t in report["controls"]["trials"]] == sorted(controls)
    screen = analysed.stdout
    assert "Hidden controls: 6 of the 16 comparisons showed one model on both sides" in screen
    assert "hidden controls (one model on both sides, 6 comparisons)" in screen
    assert screen.index("Hidden controls:") < screen.index("LLM judge sim-judge-first")
    # The report page has its section; verify recomputes the whole run, controls included.
    page = tmp_path / "report.html"
    assert invoke("analyze", run, "--html", page).exit_code in (0, 1)
    html = page.read_text()
    assert 'id="controls"' in html
    assert "sim-judge-first" in html
    assert invoke("verify", run).exit_code == 0


def test_a_person_who_always_picks_left_is_told_so_in_a_plain_sentence(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4", "--no-reason")
    judged = invoke("judge", run, "--judge-id", "alice", input="1\n\n" * 14)
    assert judged.exit_code == 0, judged.output
    analysed = invoke("analyze", run)
    report = load(run / artifacts.REPORT)
    assert report["n"] == 10
    found = report["controls"]["judges"][0]
    assert found["judge_kind"] == "human"
    assert found["low_confidence"] is None
    assert found["left"] == 4
    assert found["non_tie"] == 4
    assert found["statement"].startswith(
        "On 4 control comparisons (the same model on both sides) you picked the output shown "
        "first 4 times, the second 0 times: first in 100% of those 4 comparisons"
    )
    assert (
        "Counting its picks, it tied in 0% (95% interval 0% to 60%) of its picks."
        in (found["statement"])
    )
    assert found["statement"].endswith("(a description; it decides nothing).")
    assert found["statement"] in flat(analysed.stdout)
    # Machine vs person (--against) compares the real trials only.
    llm = run / "picks-llm.jsonl"
    judged = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", simulator.base_url,
        "--out", llm,
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
    invoke("analyze", run, "--against", llm, "--force")
    pairs = load(run / artifacts.REPORT)["machine_vs_person"]["pairs"]
    assert [p["n"] for p in pairs] == [10]


def test_unfinished_run_with_controls_is_void_and_reveals_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4", "--no-reason")
    judged = invoke("judge", run, "--judge-id", "alice", input="1\n\n" * 7)
    assert judged.exit_code != 0  # stdin closed mid-session: 7 picks kept
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1
    report = load(run / artifacts.REPORT)
    assert report["verdict"] == "void"
    assert "controls" not in report
    assert "per_trial" not in report
    assert "only 7 of 14 trials were judged" in report["statement"]  # as the judge saw them
    assert "control" not in analysed.output.lower()


def test_bot_judge_and_export_leave_controls_out(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4")
    assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
    assert invoke("audit", run).exit_code == 0
    invoke("analyze", run)
    report = load(run / artifacts.REPORT)
    assert report["n"] == 10
    found = report["controls"]["judges"][0]
    assert found["judge_kind"] == "bot"
    assert found["controls"] == 4
    assert "the bot bot:length" in found["statement"]
    # The audit's length bot is scored on the real trials only.
    assert load(run / artifacts.AUDIT)["bots"]["length"]["n"] <= 10
    out = tmp_path / "prefs.jsonl"
    exported = invoke("analyze", run, "--export-preferences", out, "--export-min-confidence", "0")
    assert exported.exit_code in (0, 1), exported.output
    assert "hidden control trial" in exported.output


def test_verify_fails_when_the_arrangements_controls_are_tampered(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4")
    assert invoke("verify", run).exit_code == 0
    recorded = load(run / artifacts.DESIGN)
    entries = recorded["arrangement"]
    moved = next(e for e in entries if "control" in e)
    target = next(e for e in entries if "control" not in e)
    target["control"] = target["left"]
    del moved["control"]
    # Re-hashed, so only the arrangement re-derived from the seed can tell.
    (run / artifacts.DESIGN).write_bytes(artifacts.dump_json(recorded))
    hashed = artifacts.sha256_file(run / artifacts.DESIGN)
    old = (run / artifacts.DESIGN_HASH).read_text()
    (run / artifacts.DESIGN_HASH).write_text(old.replace(old.split()[0], hashed))
    result = invoke("verify", run)
    assert result.exit_code == 1
    assert "design.json/arrangement" in result.output
    # A recorded count that the arrangement does not bear out, even one above the trials.
    recorded["controls"] = 99
    (run / artifacts.DESIGN).write_bytes(artifacts.dump_json(recorded))
    hashed = artifacts.sha256_file(run / artifacts.DESIGN)
    now = (run / artifacts.DESIGN_HASH).read_text()
    (run / artifacts.DESIGN_HASH).write_text(now.replace(now.split()[0], hashed))
    result = invoke("verify", run)
    assert result.exit_code == 1
    assert "design.json/controls" in result.output
    assert "design.sha256" not in result.output.replace("checked  design.sha256", "")


def test_blindtest_run_forwards_controls(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--protocol", "preference", "--trials", "6", "--controls", "2", "--judge",
        "bot:random", "--run-dir", run, "--seed", "s",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    assert load(run / artifacts.DESIGN)["controls"] == 2
    report = load(run / artifacts.REPORT)
    assert report["n"] == 6
    assert report["controls"]["judges"][0]["controls"] == 2
    # A printed design command for the next run gives the real trials and the controls.
    commands = [line for line in result.output.splitlines() if "bt-design NEW-RUN" in line]
    assert all("--trials 6 --controls 2" in line for line in commands)


def test_judging_page_and_view_are_the_same_for_a_control_and_a_real_trial(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from dataclasses import fields, replace

    from blindtest.judging.web.page import Place, trial_page
    from blindtest.model.picks import load_judge_run

    run = made(invoke, tmp_path / "run", simulator.base_url, "--controls", "4")
    judged = load_judge_run(run)
    view = judged.view  # what the terminal session, the web page and every judge get
    assert {f.name for f in fields(view)} == {
        "protocol", "trials", "question", "extra_questions", "require_reason", "sequential",
        "design_sha256", "extra_questions_per_option",
    }  # fmt: skip
    controls = {e["trial"] for e in judged.design["arrangement"] if "control" in e}
    control = next(t for t in view.trials if t.number in controls)
    real = next(t for t in view.trials if t.number not in controls)

    def page(trial: Any) -> str:
        return trial_page(view, trial, Place(3, 14), "/t/x/", plain=False, nicknames=None)

    # The page is a function of the trial's number and texts alone: a control page with a real
    # trial's texts is that trial's page with the control's number.
    swapped = replace(control, prompt=real.prompt, options=real.options, history=real.history)
    assert page(swapped) == page(replace(real, number=control.number))


def test_controls_with_identical_outputs_are_named_after_judging(
    invoke: Invoke, tmp_path: Path
) -> None:
    from blindtest.simulator.server import SimulatorConfig, running

    with running(SimulatorConfig(deterministic=True)) as sim:
        run = made(invoke, tmp_path / "run", sim.base_url, "--controls", "2")
        assert invoke("judge", run, "--judge", "bot:random").exit_code == 0
    invoke("analyze", run)
    section = load(run / artifacts.REPORT)["controls"]
    assert section["identical_outputs"] == [t["trial"] for t in section["trials"]]
    assert "2 control(s) showed two identical outputs" in section["lines"][1]


def test_schema_takes_control_on_preference_entries_only(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from blindtest.errors import BadInput

    run = tmp_path / "run"
    assert design(invoke, run, simulator.base_url, "--controls", "2").exit_code == 0
    recorded = load(run / artifacts.DESIGN)
    artifacts.validate(recorded, "design", artifacts.DESIGN)
    bad_side = orjson.loads(orjson.dumps(recorded))
    next(e for e in bad_side["arrangement"] if "control" in e)["control"] = "C"
    triangle = orjson.loads(orjson.dumps(recorded))
    triangle["protocol"] = "triangle"
    for entry in triangle["arrangement"]:
        entry.pop("left")
        entry.update({"doubled": "A", "odd_position": 1})
    for broken in (bad_side, triangle):
        with pytest.raises(BadInput):
            artifacts.validate(broken, "design", artifacts.DESIGN)


def test_llm_judge_spend_counts_the_controls_it_was_asked(
    invoke: Any, simulator: Any, tmp_path: Path
) -> None:
    """The judge's requests, tokens and cost in the report are what it spent, hidden controls
    included (a user compares them with the bill); its other diagnostics cover the real
    trials only."""
    from llm_runs import judge_requests

    url = simulator.base_url
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", 8, "--controls", 2,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "spend",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = invoke(
        "judge", run, "--judge", "llm:sim-judge-fair", "--judge-url", url, "--price", "1,2"
    )
    assert judged.exit_code == 0, judged.output
    asked = len(judge_requests(simulator))
    assert asked == 20  # 10 comparisons, two passes each
    assert invoke("analyze", run).exit_code == 0
    report = orjson.loads((run / "report.json").read_bytes())
    (found,) = report["llm_judges"]["judges"]
    assert found["comparisons"] == 8
    assert found["requests"] == asked
    picks = [orjson.loads(line) for line in (run / "picks.jsonl").read_bytes().splitlines()]
    assert found["tokens"] == sum(p["tokens"]["prompt"] + p["tokens"]["completion"] for p in picks)
    assert found["cost"] == pytest.approx(sum(p["cost"] for p in picks))
