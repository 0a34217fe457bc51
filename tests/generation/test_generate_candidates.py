"""bt-generate on a design with several candidates: each candidate answers each prompt once
(k x prompts requests, however many comparisons show the answers), the blinded view reads
every comparison's two options through the answers' owners and names no candidate, a rerun
asks for nothing, a run killed midway resumes without asking an answered slot again, and the
options that name sides A and B are refused with one line."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.generation.cost import estimate_cost
from blindtest.model.candidates import answer_owners
from blindtest.rundir import artifacts
from blindtest.simulator import Fault, Simulator
from blindtest.transport.wire import ServerError, parameter_fix

from candidate_runs import CANDIDATES, make_candidate_run
from conftest import Invoke

HELPER = Path(__file__).parents[1] / "candidate_runs.py"
NAMES = list(CANDIDATES)
MODELS = sorted({spec["model"] for spec in CANDIDATES.values()})


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def seeds(simulator: Simulator) -> list[int]:
    return [request.json()["seed"] for request in simulator.requests]


def test_each_candidate_answers_each_prompt_once_and_every_comparison_reads_the_owners(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=5, mode="all")
    assert design["trials"] == 5 * 6  # every pair of 4 candidates on every prompt
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    assert simulator.stats()["requests"] == 4 * 5  # k x prompts, not 2 x comparisons
    assert simulator.stats()["answered_twice"] == 0
    rows = lines(run / "responses.jsonl")
    owners = answer_owners(design)
    assert {(r["prompt_id"], r["side"]): (r["trial"], r["slot"]) for r in rows} == owners
    assert len(rows) == len(owners)
    text = {(r["prompt_id"], r["side"]): r["text"] for r in rows}
    trials = lines(run / "trials.jsonl")
    assert len(trials) == 30
    for entry, trial in zip(design["arrangement"], trials, strict=True):
        assert trial["trial"] == entry["trial"]
        pid = entry["prompt_id"]
        assert trial["options"] == [text[(pid, entry["left"])], text[(pid, entry["right"])]]
    # Each row asked its model, with the seed of the slot that owns it.
    for row in rows:
        assert row["model"] == CANDIDATES[row["side"]]["model"]
    # The announcement and the summary speak of candidates, per answer.
    said = result.stderr.splitlines()
    assert said[:2] == [
        "fetching 20 responses: one per candidate and prompt, for 30 comparisons",
        "  estimate for the whole run, per candidate:",
    ]
    assert [line.split()[0] for line in said[2:6]] == NAMES
    assert said[2].startswith("    alpha  ~")
    assert "per-candidate figures are in generation.json" in result.stderr


@pytest.mark.parametrize(("mode", "per_prompt"), [("reference:alpha", 3), ("sample:2", 2)])
def test_reference_and_sampled_pairs_ask_each_answer_once(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, mode: str, per_prompt: int
) -> None:
    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=6, mode=mode)
    assert design["trials"] == 6 * per_prompt
    assert invoke("generate", run, "--quiet").exit_code == 0
    answers = len(answer_owners(design))  # the (prompt, candidate) some comparison shows
    assert simulator.stats()["requests"] == answers
    assert len(lines(run / "trials.jsonl")) == design["trials"]


def test_cost_and_tokens_are_recorded_per_candidate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=3)
    result = invoke("generate", run, "--quiet", "--price", "alpha=2.5,10", "--price", "beta=1,2")
    assert result.exit_code == 0, result.stderr
    record = artifacts.read_json(run / "generation.json", "generation")
    assert set(record["roles"]) == set(NAMES)  # design.json and generation.json sort keys
    assert set(record["prices"]) == {"alpha", "beta"}
    for name in NAMES:
        role = record["roles"][name]
        assert role["model"] == CANDIDATES[name]["model"]
        assert role["responses"] == 3
        assert role["completion_tokens"] > 0
    alpha = record["roles"]["alpha"]
    expected = (alpha["prompt_tokens"] * 2.5 + alpha["completion_tokens"] * 10) / 1e6
    assert alpha["cost"] == pytest.approx(expected, rel=1e-12)
    assert record["roles"]["gamma"]["cost"] is None  # no price given


def test_a_rerun_asks_for_nothing_and_changes_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=4)
    assert invoke("generate", run, "--quiet", "--price", "delta=1,1").exit_code == 0
    files = {
        name: (run / name).read_bytes()
        for name in (artifacts.RESPONSES, artifacts.GENERATION, artifacts.TRIALS)
    }
    before = simulator.stats()["requests"]
    again = invoke("generate", run)
    assert again.exit_code == 0, again.stderr
    assert simulator.stats()["requests"] == before
    assert again.stderr.splitlines()[0] == (
        "nothing to fetch (16 rows on disk); generation.json unchanged; "
        "recorded prices kept for delta"
    )
    assert {name: (run / name).read_bytes() for name in files} == files


def test_a_killed_run_resumes_without_asking_an_answered_slot_again(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=15)
    total = len(answer_owners(design))  # 60 answers for 90 comparisons
    simulator.config.latency = 0.02
    # 20 answers, then every request held: the run cannot end before the kill, however busy
    # the machine.
    simulator.config.fail_after, simulator.config.fail_with = 20, "hang"
    process = subprocess.Popen(
        [sys.executable, str(HELPER), "accept", str(run), "--",
         "generate", str(run), "--quiet", "--concurrency", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        while sum(slot.answered for slot in simulator.slots.values()) < 20:
            assert process.poll() is None, "bt-generate ended before it was stopped"
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    simulator.config.latency, simulator.config.fail_after = 0.0, None
    kept = lines(run / "responses.jsonl")
    assert 0 < len(kept) <= 20 < total
    asked_before = len(simulator.requests)
    again = invoke("generate", run, "--quiet")
    assert again.exit_code == 0, again.stderr
    asked_now = seeds(simulator)[asked_before:]
    assert len(asked_now) == total - len(kept)  # only what the disk did not hold
    assert not set(asked_now) & {row["seed"] for row in kept}
    rows = lines(run / "responses.jsonl")
    assert {(r["trial"], r["slot"]) for r in rows} == set(answer_owners(design).values())
    assert len(rows) == total
    assert len(lines(run / "trials.jsonl")) == design["trials"]


def test_nothing_a_judge_or_a_bot_sees_names_a_candidate_or_its_model(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    models = {name: {**spec, "label": f"{name}-label"} for name, spec in CANDIDATES.items()}
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=4, models=models)
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = invoke("judge", run, "--judge", "bot:length")
    assert judged.exit_code == 0, judged.stderr
    shown = (run / "trials.jsonl").read_text() + (run / "picks.jsonl").read_text()
    shown += judged.stdout + judged.stderr
    for word in [*NAMES, *MODELS, *(f"{name}-label" for name in NAMES)]:
        assert word not in shown
    for trial in lines(run / "trials.jsonl"):
        assert set(trial) == {"schema", "trial", "prompt", "options"}
    assert len(lines(run / "picks.jsonl")) == 4 * 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--price-a", "1,2"],
            "--price-a: this design has candidates (alpha, beta, gamma, delta), not sides A "
            "and B; price each with --price NAME=IN,OUT",
        ),
        (
            ["--price", "zeta=1,2"],
            "--price zeta: this design has no candidate of that name (candidates: alpha, beta, "
            "gamma, delta)",
        ),
        (
            ["--price", "alpha=1"],
            "--price alpha=1: expected IN,OUT dollars per million tokens (two finite numbers "
            ">= 0), e.g. 2.5,10",
        ),
        (
            ["--price", "alpha"],
            "--price alpha: expected NAME=IN,OUT (a candidate's name and its dollars per "
            "million tokens), e.g. --price alpha=2.5,10",
        ),
        (
            ["--b-rpm", "5"],
            "--b-rpm: this design has candidates (alpha, beta, gamma, delta), not sides A and "
            "B; --concurrency and --rpm hold per endpoint, shared by the candidates on it",
        ),
        (
            ["--a-header-env", "X-Org:ORG"],
            "--a-header-env: this design has candidates (alpha, beta, gamma, delta), not sides "
            "A and B; --concurrency and --rpm hold per endpoint, shared by the candidates on it",
        ),
    ],
)
def test_options_for_sides_a_and_b_are_refused_with_one_line(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, args: list[str], message: str
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=2)
    result = invoke("generate", run, *args)
    assert result.exit_code == 2
    assert result.stderr == f"blindtest: error: {message}\n"
    assert simulator.stats()["requests"] == 0
    assert not (run / "responses.jsonl").exists()


def test_a_price_for_a_candidate_on_a_two_sided_design_is_refused(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from generate_runs import make_design

    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    result = invoke("generate", run, "--price", "alpha=1,2")
    assert result.exit_code == 2
    assert result.stderr == (
        "blindtest: error: --price alpha: this design has sides A and B, not candidates; "
        "price them with --price-a and --price-b\n"
    )


def test_check_asks_each_candidate_endpoint_once_in_the_design_order(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=2)
    result = invoke("generate", run, "--check", "--price", "beta=1,2")
    assert result.exit_code == 0, result.stderr
    titles = [line for line in result.stdout.splitlines() if line.startswith("candidate ")]
    assert [title.split(":")[0] for title in titles] == [f"candidate {n}" for n in NAMES]
    assert "unknown: no price (--price alpha=IN,OUT)" in result.stdout
    assert len(simulator.requests) == 4  # one chat request per candidate
    assert not (run / "responses.jsonl").exists()


def test_a_row_at_a_slot_that_owns_no_answer_is_refused(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=3)
    assert invoke("generate", run, "--quiet").exit_code == 0
    owners = set(answer_owners(design).values())
    reader = next(
        (e["trial"], slot)
        for e in design["arrangement"]
        for slot in (1, 2)
        if (e["trial"], slot) not in owners
    )
    rows = lines(run / "responses.jsonl")
    entry = design["arrangement"][reader[0] - 1]
    moved = rows[0] | {"trial": reader[0], "slot": reader[1]}
    moved["side"] = entry["left"] if reader[1] == 1 else entry["right"]
    moved["prompt_id"] = entry["prompt_id"]
    with (run / "responses.jsonl").open("ab") as out:
        out.write(orjson.dumps(moved) + b"\n")
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert result.stderr == (
        f"blindtest: error: responses.jsonl row {len(rows) + 1} (trial {reader[0]}, slot "
        f"{reader[1]}, side {moved['side']}) does not belong to this design; use a new run "
        "directory\n"
    )


def test_a_two_sided_run_refuses_a_row_naming_a_candidate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from generate_runs import make_design

    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    rows = lines(run / "responses.jsonl")
    with (run / "responses.jsonl").open("ab") as out:
        out.write(orjson.dumps(rows[0] | {"side": "gamma"}) + b"\n")
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "side gamma) does not belong to this design" in result.stderr


def test_from_dirs_imports_each_candidates_files_once_without_a_request(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from candidate_runs import candidates_dirs_design, write_design

    dirs = {name: tmp_path / "outputs" / name for name in NAMES}
    for name, path in dirs.items():
        path.mkdir(parents=True)
        for item in range(1, 5):
            (path / f"q{item}.md").write_text(f"{name} on item {item}, at its own length.\n")
    source = tmp_path / "two-sided"
    made = invoke(
        "design", source, "--from-dirs", dirs["alpha"], dirs["beta"],
        "--protocol", "preference", "--trials", 4, "--seed", "dirs",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = candidates_dirs_design(artifacts.load_design(source).design, dirs)
    run = tmp_path / "run"
    write_design(run, design)
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    assert simulator.stats()["requests"] == 0
    rows = lines(run / "responses.jsonl")
    assert len(rows) == 4 * 4
    assert {r["kind"] for r in rows} == {"imported"}
    for row in rows:
        item = row["prompt_id"]
        said = (dirs[row["side"]] / item).read_text()
        assert row.get("raw_text", row["text"]) == said
        assert row["text"] == said.replace(row["side"], "[redacted]")  # the name is stripped
        assert row["source_sha256"] == design["source"]["files"][item][row["side"]]["0"]
    text = {(r["prompt_id"], r["side"]): r["text"] for r in rows}
    for entry, trial in zip(design["arrangement"], lines(run / "trials.jsonl"), strict=True):
        pid = entry["prompt_id"]
        assert trial["options"] == [text[(pid, entry["left"])], text[(pid, entry["right"])]]
    again = invoke("generate", run)
    assert again.exit_code == 0
    assert len(lines(run / "responses.jsonl")) == 16  # nothing imported twice
    (dirs["gamma"] / "q2.md").write_text("changed after the design\n")
    fresh = tmp_path / "fresh"
    write_design(fresh, design)
    changed = invoke("generate", fresh)
    assert changed.exit_code == 2
    assert changed.stderr == (
        f"blindtest: error: {dirs['gamma'] / 'q2.md'} changed since the design was made; make "
        "a new design\n"
    )


def test_batch_submits_one_batch_per_candidate_and_asks_each_answer_once(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=3)
    simulator.config.batch_delay = 0.05
    result = invoke("generate", run, "--batch", "--poll-interval", "0.02", "--price", "beta=1,2")
    assert result.exit_code == 0, result.stderr
    record = artifacts.read_json(run / artifacts.BATCHES, "batches")
    assert sorted(b["side"] for b in record["batches"]) == sorted(NAMES)
    assert all(b["imported"] for b in record["batches"])
    rows = lines(run / "responses.jsonl")
    assert {(r["trial"], r["slot"]) for r in rows} == set(answer_owners(design).values())
    assert len(rows) == 4 * 3
    assert len(lines(run / "trials.jsonl")) == design["trials"]
    generation = artifacts.read_json(run / "generation.json", "generation")
    assert generation["roles"]["beta"]["cost"] is not None


def test_batch_export_counts_the_slots_of_each_candidate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=3)
    out = tmp_path / "batch.jsonl"
    result = invoke("generate", run, "--batch-export", out)
    assert result.exit_code == 0, result.stderr
    assert f"wrote {out}: 12 requests in the openai batch format (3 + 3 + 3 + 3 slots)" in (
        result.stderr
    )
    bodies = lines(out)
    assert len(bodies) == 12
    assert sorted({b["body"]["model"] for b in bodies}) == MODELS


def test_laundering_rewrites_each_answer_once_and_every_comparison_shows_the_rewrite(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    launder = ["--launder", "sim-launder", "--launder-url", simulator.base_url]
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=3, extra=launder)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert simulator.stats()["requests"] == 2 * 4 * 3  # each answer, then its laundering
    rows = lines(run / "responses.jsonl")
    rewrite = {(r["prompt_id"], r["side"]): r["text"] for r in rows if r["stage"] == "launder"}
    assert len(rewrite) == 12
    for entry, trial in zip(design["arrangement"], lines(run / "trials.jsonl"), strict=True):
        pid = entry["prompt_id"]
        assert trial["options"] == [rewrite[(pid, entry["left"])], rewrite[(pid, entry["right"])]]


def test_a_changed_candidate_makes_its_answers_stale_and_names_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from candidate_runs import write_design

    run = tmp_path / "run"
    design = make_candidate_run(invoke, run, simulator, tmp_path, prompts=3)
    assert invoke("generate", run, "--quiet").exit_code == 0
    design["models"]["gamma"]["system"] = "Answer as a poet would."
    for name in ("design.json", "design.sha256", "trials.jsonl", "generation.json"):
        (run / name).unlink()
    write_design(run, design)
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "3 answers on disk were made for other requests than their slots make now " in (
        result.stderr
    )
    assert "(candidate gamma: 3; the design changed" in result.stderr
    asked = simulator.stats()["requests"]
    again = invoke("generate", run, "--quiet", "--refetch-changed")
    assert again.exit_code == 0, again.stderr
    assert simulator.stats()["requests"] == asked + 3  # gamma's three answers, nothing else


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            ServerError("x", "unsupported_value", None, "temperature"),
            "this model takes only its default temperature: design again with temperature = 1 "
            "in gamma's table of a --sides file (or --temperature 1 for every candidate)",
        ),
        (
            ServerError("x", "unsupported_parameter", None, "max_completion_tokens"),
            "this model refuses max_completion_tokens: design again with max_completion_tokens "
            "= null in the extra_params of gamma's table of a --sides file (and max_tokens = N "
            "there for a limit)",
        ),
        (
            ServerError("x", "unsupported_parameter", None, "top_p"),
            "this model refuses top_p: design again with top_p = null in the extra_params of "
            "gamma's table of a --sides file",
        ),
    ],
)
def test_a_refused_parameter_names_where_a_candidate_sets_it(
    said: ServerError, expected: str
) -> None:
    assert parameter_fix(400, said, "gamma") == expected
    assert parameter_fix(400, said, "judge") is None


def test_a_refused_temperature_stops_the_run_naming_the_candidate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    body = (
        '{"error": {"message": "Unsupported value: temperature does not support 0.5", '
        '"type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}'
    )
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=2)
    simulator.inject(Fault("status", status=400, body=body), times=100, model="sim-small")
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 3
    assert "temperature = 1 in beta's table of a --sides file" in result.stderr or (
        "temperature = 1 in delta's table of a --sides file" in result.stderr
    )


def test_concurrency_holds_per_endpoint_however_many_candidates_it_serves(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # Four candidates on one server and one key: --concurrency 2 is two requests in flight
    # at that server, not two per candidate (eight).
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=6)
    simulator.config.latency = 0.03
    result = invoke("generate", run, "--quiet", "--concurrency", "2")
    assert result.exit_code == 0, result.stderr
    in_flight = simulator.stats()["max_in_flight"]
    assert set(in_flight) == set(MODELS)
    assert sum(in_flight.values()) <= 2 * 2  # each model's peak within the shared two
    assert max(in_flight.values()) <= 2
    assert simulator.stats()["requests"] == 4 * 6


def test_the_estimate_of_a_cheap_candidate_is_never_a_zero_it_is_not(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_candidate_run(invoke, run, simulator, tmp_path, prompts=5, mode="all")
    design = artifacts.load_design(run).design
    result = invoke("generate", run, "--price", "alpha=0.15,0.6")
    assert result.exit_code == 0, result.stderr
    alpha = next(line for line in result.stderr.splitlines() if line.startswith("    alpha "))
    said = alpha.rsplit("about $", 1)[1]
    expected = estimate_cost(design, {"alpha": (0.15, 0.6)})["alpha"]["cost"]
    assert 0 < expected < 0.005  # cents would round it to $0.00
    assert float(said) == pytest.approx(expected, rel=0.05)
