"""bt-generate against the local simulator: prefetch, resume, failures, normalization, secrets."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, cast

import orjson
import pytest

from blindtest.generation.guard import identical_draws
from blindtest.model.normalize import count_words
from blindtest.model.slots import SlotState, plan_slots, slot_seed
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord
from blindtest.simulator import Simulator

from conftest import Invoke, numbered_prompts
from generate_runs import make_design, rows


def requests_per_slot(simulator: Simulator) -> Counter[int]:
    """How many requests each (trial, slot) caused, identified by its per-slot seed."""
    return Counter(request.json().get("seed") for request in simulator.requests)


def test_triangle_fetches_three_independent_slots_per_trial_once_each(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_design(invoke, run, simulator, tmp_path)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 0, result.stderr
    got = rows(run)
    assert len(got) == 18
    for entry in design["arrangement"]:
        trial_rows = {r["slot"]: r for r in got if r["trial"] == entry["trial"]}
        other = "B" if entry["doubled"] == "A" else "A"
        for position, row in trial_rows.items():
            expected = other if position == entry["odd_position"] else entry["doubled"]
            assert row["side"] == expected
            assert row["model"] == design["models"][expected]["model"]
            assert row["status"] == "ok"
            assert row["attempts"] == 1
            assert row["seed"] == slot_seed("gen", entry["trial"], position)
    assert set(requests_per_slot(simulator).values()) == {1}
    assert len(simulator.requests) == 18
    for request in simulator.requests:
        assert "n" not in request.json()


def test_trials_view_is_blinded_and_in_display_order(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    design = make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    trials = artifacts.read_jsonl(run / "trials.jsonl", "trials").records
    prompts = {p["id"]: p["text"] for p in design["prompts"]}
    by_slot = {(r["trial"], r["slot"]): r["text"] for r in rows(run)}
    for view, entry in zip(trials, design["arrangement"], strict=True):
        assert set(view) == {"schema", "trial", "prompt", "options"}
        assert view["prompt"] == prompts[entry["prompt_id"]]
        assert view["options"] == [by_slot[(entry["trial"], s)] for s in (1, 2, 3)]
    blob = (run / "trials.jsonl").read_text()
    for word in ("sim-large", "sim-small", '"side"', '"model"', "doubled", "odd_position"):
        assert word not in blob


def test_request_bodies_are_valid_openai_requests_with_the_system_prompt(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, request_validator: Any
) -> None:
    run = tmp_path / "run"
    make_design(
        invoke,
        run,
        simulator,
        tmp_path,
        "--system",
        "Be brief.",
        "--length-band",
        "40..60",
        "--max-tokens",
        "300",
        "--temperature",
        "0.8",
    )
    assert invoke("generate", run, "--quiet").exit_code == 0
    for request in simulator.requests:
        body = request.json()
        request_validator.validate(body)
        assert body["messages"][0] == {
            "role": "system",
            "content": "Be brief.\n\nAnswer in between 40 and 60 words.",
        }
        assert body["temperature"] == 0.8
        assert body["max_tokens"] == 300


def test_rerun_fetches_nothing_when_complete(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    before = (run / "responses.jsonl").read_bytes()
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert (run / "responses.jsonl").read_bytes() == before
    assert len(simulator.requests) == 18


def test_resume_fetches_only_missing_slots_and_repairs_a_torn_line(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    assert invoke("generate", run, "--quiet").exit_code == 0
    lines = (run / "responses.jsonl").read_bytes().splitlines(keepends=True)
    kept = lines[:7]
    (run / "responses.jsonl").write_bytes(b"".join(kept) + lines[7][:40])
    (run / "trials.jsonl").unlink()
    simulator.requests.clear()
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert len(simulator.requests) == 11
    kept_seeds = {orjson.loads(line)["seed"] for line in kept}
    assert not kept_seeds & set(requests_per_slot(simulator))
    assert len(rows(run)) == 18
    assert (run / "trials.jsonl").exists()


def test_slot_failing_after_retries_is_an_explicit_failure_row_and_exit_3(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    prompts = numbered_prompts(6)
    prompts[2] = "[sim:500] " + prompts[2]
    make_design(invoke, run, simulator, tmp_path, prompts=prompts)
    result = invoke("generate", run, "--quiet", "--max-retries", "1")
    assert result.exit_code == 3
    assert "still unanswered after retries" in result.stderr
    assert result.stderr.count("\n") == 1
    failed = [r for r in rows(run) if r["status"] == "failed"]
    assert failed
    assert all(r["text"] is None and r["error"] and r["attempts"] == 2 for r in failed)
    assert not (run / "trials.jsonl").exists()


def test_failed_slots_are_tried_again_on_the_next_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    prompts = numbered_prompts(6)
    prompts[0] = "[sim:503*2] " + prompts[0]  # the first two requests of each such slot fail
    make_design(invoke, run, simulator, tmp_path, prompts=prompts)
    assert invoke("generate", run, "--quiet", "--max-retries", "0").exit_code == 3
    answered_first = {(r["trial"], r["slot"]) for r in rows(run) if r["status"] == "ok"}
    assert invoke("generate", run, "--quiet", "--max-retries", "3").exit_code == 0
    state = SlotState.from_rows(rows(run))
    assert all(state.generated[key]["status"] == "ok" for key in state.generated)
    counts = requests_per_slot(simulator)
    for trial, slot in answered_first:
        assert counts[slot_seed("gen", trial, slot)] == 1


def test_bad_key_stops_at_once_naming_side_model_and_server_message(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    simulator.config.api_key = "the-right-one"
    monkeypatch.setenv("OPENAI_API_KEY", "simkey-wrong-" + "z" * 20)
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 3
    assert result.stderr.count("\n") == 1
    assert "Incorrect API key" in result.stderr
    assert "sim-large" in result.stderr or "sim-small" in result.stderr
    assert len(simulator.requests) <= 16  # stopped, not every slot tried


def test_no_key_appears_in_any_file_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, sim_key: str
) -> None:
    run = tmp_path / "run"
    make_design(
        invoke,
        run,
        simulator,
        tmp_path,
        "--a-key-env",
        "BLINDTEST_SIM_KEY",
        "--b-key-env",
        "BLINDTEST_SIM_KEY",
    )
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    assert sim_key not in result.stdout + result.stderr
    for path in run.iterdir():
        assert sim_key.encode() not in path.read_bytes(), path.name
    assert all(r.headers.get("authorization") == f"Bearer {sim_key}" for r in simulator.requests)


def test_missing_key_variable_is_bad_input_before_any_request(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    run = tmp_path / "run"
    make_design(
        invoke,
        run,
        simulator,
        tmp_path,
        "--a-key-env",
        "NOPE_KEY",
        "--a-url",
        "http://example.invalid/v1",
    )
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "NOPE_KEY is not set" in result.stderr
    assert not (run / "responses.jsonl").exists()


def test_design_edited_after_hashing_is_refused(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    data = (run / "design.json").read_bytes().replace(b'"gen"', b'"gem"')
    (run / "design.json").write_bytes(data)
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "no longer matches design.sha256" in result.stderr
    assert simulator.requests == []


def test_strip_formatting_keeps_the_original_in_raw_text(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--strip-formatting")
    assert invoke("generate", run, "--quiet").exit_code == 0
    large = [r for r in rows(run) if r["side"] == "A"]
    assert any("raw_text" in r for r in large)
    for row in large:
        assert "**" not in row["text"]
        assert "—" not in row["text"]
        assert "\n- " not in row["text"]


def test_truncate_match_cuts_every_option_to_the_shortest(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--truncate-match")
    assert invoke("generate", run, "--quiet").exit_code == 0
    for view in artifacts.read_jsonl(run / "trials.jsonl", "trials").records:
        assert len({count_words(text) for text in view["options"]}) == 1


def test_laundering_rewrites_every_response_and_resumes_per_stage(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(
        invoke,
        run,
        simulator,
        tmp_path,
        "--launder",
        "sim-launder",
        "--launder-url",
        simulator.base_url,
    )
    assert invoke("generate", run, "--quiet").exit_code == 0
    got = rows(run)
    laundered = {(r["trial"], r["slot"]): r for r in got if r.get("stage") == "launder"}
    assert len(laundered) == 18
    assert all(r["model"] == "sim-launder" for r in laundered.values())
    views = artifacts.read_jsonl(run / "trials.jsonl", "trials").records
    for view in views:
        for slot, text in enumerate(view["options"], start=1):
            assert text == laundered[(view["trial"], slot)]["text"]
    generation = orjson.loads((run / "generation.json").read_bytes())
    assert set(generation["roles"]) == {"A", "B", "launder"}


def test_prices_give_cost_per_role_in_generation_json(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    result = invoke("generate", run, "--price-a", "2.5,10", "--price-b", "0.15,0.6")
    assert result.exit_code == 0, result.stderr
    assert "estimate for the whole run" in result.stderr
    generation = orjson.loads((run / "generation.json").read_bytes())
    a = generation["roles"]["A"]
    assert a["cost"] == pytest.approx(
        (a["prompt_tokens"] * 2.5 + a["completion_tokens"] * 10) / 1e6
    )
    assert generation["prices"]["B"] == {"input": 0.15, "output": 0.6}
    bad = invoke("generate", run, "--price-a", "cheap")
    assert bad.exit_code == 2
    assert "--price-a: expected IN,OUT" in bad.stderr


def test_identical_same_model_draws_are_counted() -> None:
    partial = {
        "protocol": "triangle",
        "arrangement": [
            {"trial": 1, "prompt_id": "p", "doubled": "A", "odd_position": 3},
            {"trial": 2, "prompt_id": "q", "doubled": "B", "odd_position": 1},
        ],
    }
    design = cast(DesignRecord, partial)  # only what the count reads
    row = {"status": "ok", "side": "A"}
    state = SlotState.from_rows(
        [
            row | {"trial": 1, "slot": 1, "text": "same  answer"},
            row | {"trial": 1, "slot": 2, "text": "same answer"},
            row | {"trial": 1, "slot": 3, "text": "other"},
            row | {"trial": 2, "slot": 2, "text": "x", "side": "B"},
            row | {"trial": 2, "slot": 3, "text": "y", "side": "B"},
        ]
    )
    assert identical_draws(design, state) == 1
    assert [s.side for s in plan_slots(design)] == ["A", "A", "B", "A", "B", "B"]


def test_openai_api_gets_max_completion_tokens_and_others_max_tokens() -> None:
    from blindtest.generation.requests import endpoints_for

    def design_for(url: str) -> DesignRecord:
        spec = {
            "model": "m",
            "base_url": url,
            "key_env": "K",
            "params": {"temperature": 1.0, "max_tokens": 100},
        }
        partial = {
            "source": {"kind": "endpoints"},
            "models": {"A": spec, "B": spec},
            "normalization": {"launder": None},
        }
        return cast(DesignRecord, partial)

    openai = endpoints_for(design_for("https://api.openai.com/v1"), {"K": "x"})
    local = endpoints_for(design_for("http://localhost:11434/v1"), {})
    assert openai["A"].max_tokens_field == "max_completion_tokens"
    assert local["A"].max_tokens_field == "max_tokens"
    assert local["A"].key_env is None  # a local server needs no key when none is set


def start_generate_and_wait(run: Path, simulator: Simulator, lines: int) -> subprocess.Popen[bytes]:
    """bt-generate in a child process, returned once ``lines`` rows are on disk; the simulator
    answers those and holds every later request (so the run cannot end first, however busy
    the machine, and no answer is on its way)."""
    simulator.config.fail_after, simulator.config.fail_with = lines, "hang"
    child = subprocess.Popen(
        [sys.executable, "-m", "blindtest", "generate", str(run), "--quiet", "--concurrency", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    path = run / "responses.jsonl"
    while not (path.exists() and path.read_bytes().count(b"\n") >= lines):
        assert child.poll() is None, child.communicate()
        time.sleep(0.02)
    return child


def assert_resume_asks_only_missing_slots(run: Path, simulator: Simulator, invoke: Invoke) -> None:
    kept = {(r["trial"], r["slot"]) for r in rows(run)}
    simulator.config.latency, simulator.config.fail_after = 0.0, None
    assert invoke("generate", run, "--quiet").exit_code == 0
    counts = requests_per_slot(simulator)
    for trial, slot in kept:
        assert counts[slot_seed("gen", trial, slot)] == 1
    assert len({(r["trial"], r["slot"]) for r in rows(run)}) == 60


def test_kill_9_mid_run_then_resume_never_asks_an_answered_slot_again(
    tmp_path: Path, simulator: Simulator, invoke: Invoke
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=20)
    simulator.config.latency = 0.05
    child = start_generate_and_wait(run, simulator, lines=10)
    os.kill(child.pid, signal.SIGKILL)
    child.communicate()
    assert len(rows(run)) == 10
    assert_resume_asks_only_missing_slots(run, simulator, invoke)


def test_ctrl_c_mid_run_exits_130_keeps_what_was_fetched_and_resumes(
    tmp_path: Path, simulator: Simulator, invoke: Invoke
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=20)
    simulator.config.latency = 0.05
    child = start_generate_and_wait(run, simulator, lines=6)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate()
    assert child.returncode == 130
    assert b"interrupted; everything done so far is kept, rerun to resume" in stderr
    assert len(rows(run)) == 6
    assert_resume_asks_only_missing_slots(run, simulator, invoke)


def test_a_prompt_too_long_for_the_model_fails_its_slot_not_the_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from blindtest.simulator import Fault

    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    too_long = Fault(
        "status", status=400, message="This model's maximum context length is 4096 tokens"
    )
    simulator.inject(too_long, times=1, model="sim-small")
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 3
    assert "1 slot(s) still unanswered" in result.stderr
    failed = [r for r in rows(run) if r["status"] == "failed"]
    assert len(failed) == 1
    assert failed[0]["kind"] == "too_long"  # was "rejected" before too-long prompts were named
    assert "maximum context length" in failed[0]["error"]
    assert len([r for r in rows(run) if r["status"] == "ok"]) == 17
