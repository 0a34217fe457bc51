"""Batch files (export, import), submit and collect
through the simulator's Batch API, and Anthropic's Message Batches format."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.cli._batch import part_paths
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.transport.batch import split_parts

from conftest import Invoke
from endpoint_fixtures import through_batch_api
from generate_runs import make_design, rows


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _by_slot(run: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["trial"], r["slot"]): r for r in rows(run) if r["status"] == "ok"}


# ------------------------------------------------------------------------------ 1. export


def test_export_writes_the_exact_live_body_with_per_slot_seed_and_run_in_custom_id(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    live, batch = tmp_path / "live", tmp_path / "batch"
    make_design(invoke, live, simulator, tmp_path, trials=6)
    make_design(invoke, batch, simulator, tmp_path, trials=6)
    assert invoke("generate", live, "--quiet").exit_code == 0
    sent = {orjson.dumps(r.json(), option=orjson.OPT_SORT_KEYS) for r in simulator.requests}
    out = tmp_path / "batch.jsonl"
    result = invoke("generate", batch, "--batch-export", out)
    assert result.exit_code == 0, result.stderr
    assert "wrote" in result.stderr
    assert "--batch-import" in result.stderr
    lines = _lines(out)
    assert len(lines) == 18
    sha = artifacts.read_design_hash(batch)
    exported = set()
    for line in lines:
        assert line["method"] == "POST"
        assert line["url"] == "/v1/chat/completions"
        assert re.fullmatch(rf"bt-{sha[:16]}-t[1-6]-s[1-3]", line["custom_id"])
        assert isinstance(line["body"]["seed"], int)
        exported.add(orjson.dumps(line["body"], option=orjson.OPT_SORT_KEYS))
    assert exported == sent  # byte for byte what the live run sent, seeds included
    assert not (batch / artifacts.RESPONSES).exists()  # export asks nothing, writes no row


def test_export_splits_into_numbered_parts_over_the_limits() -> None:
    lines = [b'{"custom_id":"x"}\n'] * 7
    assert [len(p) for p in split_parts(lines, max_requests=3)] == [3, 3, 1]
    assert [len(p) for p in split_parts(lines, max_bytes=len(lines[0]) * 2)] == [2, 2, 2, 1]
    assert part_paths(Path("out/batch.jsonl"), 1) == [Path("out/batch.jsonl")]
    assert part_paths(Path("out/batch.jsonl"), 2) == [
        Path("out/batch.part1.jsonl"),
        Path("out/batch.part2.jsonl"),
    ]


def test_export_refuses_to_overwrite_a_file_that_is_not_this_runs_batch(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    other = tmp_path / "notes.jsonl"
    other.write_text('{"mine": 1}\n')
    result = invoke("generate", run, "--batch-export", other)
    assert result.exit_code == 2
    assert "not a batch file of this run" in result.stderr
    assert other.read_text() == '{"mine": 1}\n'


# ----------------------------------------------------------- done-when: batch equals live


def test_done_300_slots_exported_run_through_batch_api_imported_equal_a_live_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    live, batch = tmp_path / "live", tmp_path / "batch"
    make_design(invoke, live, simulator, tmp_path, trials=100)
    make_design(invoke, batch, simulator, tmp_path, trials=100)
    assert invoke("generate", live, "--quiet").exit_code == 0
    out = tmp_path / "batch.jsonl"
    assert invoke("generate", batch, "--batch-export", out).exit_code == 0
    assert len(_lines(out)) == 300
    output, errors = through_batch_api(simulator, out.read_bytes())
    assert errors == b""
    results = tmp_path / "results.jsonl"
    results.write_bytes(output)
    result = invoke("generate", batch, "--batch-import", results)
    assert result.exit_code == 0, result.stderr
    assert "imported 300 rows (0 failed)" in result.stderr
    a, b = _by_slot(live), _by_slot(batch)
    assert len(a) == len(b) == 300
    for key in a:
        assert (b[key]["text"], b[key]["usage"]) == (a[key]["text"], a[key]["usage"])
        assert b[key]["seed"] == a[key]["seed"]
    assert (batch / artifacts.TRIALS).read_bytes() == (live / artifacts.TRIALS).read_bytes()
    for run in (live, batch):  # analysed alike: a bot judges, the audit and report follow
        assert invoke("judge", run, "--judge", "bot:length").exit_code == 0
        assert invoke("audit", run).exit_code == 0
        assert invoke("analyze", run).exit_code in (0, 1)
    report = {run: orjson.loads((run / artifacts.REPORT).read_bytes()) for run in (live, batch)}
    assert report[live]["correct"] == report[batch]["correct"]
    assert report[live]["p_value"] == report[batch]["p_value"]


# --------------------------------------------------------------------------- 2. import


def _exported_and_answered(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, run: Path, *extra: str
) -> Path:
    make_design(invoke, run, simulator, tmp_path, *extra, trials=6)
    out = tmp_path / f"{run.name}-in.jsonl"
    assert invoke("generate", run, "--batch-export", out).exit_code == 0
    output, _ = through_batch_api(simulator, out.read_bytes())
    results = tmp_path / f"{run.name}-out.jsonl"
    results.write_bytes(output)
    return results


def test_done_tampered_or_foreign_batch_output_refused_with_a_count_nothing_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _exported_and_answered(invoke, tmp_path, simulator, run)
    lines = results.read_bytes().splitlines(keepends=True)
    sha = artifacts.read_design_hash(run)[:16]
    # Tampered: one custom_id pointed at another run, one at a slot the design lacks.
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(
        lines[0].replace(sha.encode(), b"0" * 16)
        + lines[1].replace(b"-t1-s2", b"-t99-s2")
        + b"".join(lines[2:])
    )
    result = invoke("generate", run, "--batch-import", tampered)
    assert result.exit_code == 2
    assert "refused 2 batch results (1 for another run, 1 for slots this design" in result.stderr
    assert "nothing written" in result.stderr
    assert not (run / artifacts.RESPONSES).exists()
    assert not (run / artifacts.GENERATION).exists()
    # Foreign: the whole output of another run (another seed, so another design hash).
    other = tmp_path / "other"
    foreign = _exported_and_answered(invoke, tmp_path, simulator, other, "--seed", "elsewhere")
    assert artifacts.read_design_hash(other) != artifacts.read_design_hash(run)
    result = invoke("generate", run, "--batch-import", foreign)
    assert result.exit_code == 2
    assert "refused 18 batch results (18 for another run" in result.stderr
    assert not (run / artifacts.RESPONSES).exists()
    # Not a result file at all (the input file given by mistake): the file and line named.
    inputs = tmp_path / "run-in.jsonl"
    result = invoke("generate", run, "--batch-import", inputs)
    assert result.exit_code == 2
    assert f"{inputs}:1: a batch input line, not a result" in result.stderr


def test_partial_import_then_the_rest_already_imported_skipped_missing_exported(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _exported_and_answered(invoke, tmp_path, simulator, run)
    lines = results.read_bytes().splitlines(keepends=True)
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    first.write_bytes(b"".join(lines[:10]))
    rest.write_bytes(b"".join(lines[10:]))
    result = invoke("generate", run, "--batch-import", first)
    assert result.exit_code == 0, result.stderr
    assert "imported 10 rows (0 failed)" in result.stderr
    assert "8 slots still missing; export just those:" in result.stderr
    assert "--batch-export missing.jsonl" in result.stderr
    assert not (run / artifacts.TRIALS).exists()
    # The same file again: every result is already imported; skipped, never written twice.
    again = invoke("generate", run, "--batch-import", first)
    assert again.exit_code == 0, again.stderr
    assert "imported 0 rows (0 failed) from 1 file; 10 already imported, skipped" in again.stderr
    assert len(rows(run)) == 10
    # Exporting now gives just the missing slots.
    missing = tmp_path / "missing.jsonl"
    assert invoke("generate", run, "--batch-export", missing).exit_code == 0
    assert len(_lines(missing)) == 8
    result = invoke("generate", run, "--batch-import", rest)
    assert result.exit_code == 0, result.stderr
    assert (run / artifacts.TRIALS).exists()
    assert Counter((r["trial"], r["slot"]) for r in rows(run)).most_common(1)[0][1] == 1


def test_error_lines_are_failure_rows_and_leave_the_slot_pending(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _exported_and_answered(invoke, tmp_path, simulator, run)
    lines = results.read_bytes().splitlines(keepends=True)
    cids = [orjson.loads(line)["custom_id"] for line in lines]
    errors = tmp_path / "errors.jsonl"
    errors.write_bytes(
        b"\n".join(
            [
                # OpenAI: an HTTP error with an error body
                orjson.dumps(
                    {
                        "id": "batch_req_1",
                        "custom_id": cids[0],
                        "response": {
                            "status_code": 500,
                            "request_id": "r1",
                            "body": {"error": {"message": "boom", "type": "server_error"}},
                        },
                        "error": None,
                    }
                ),
                # vLLM run-batch: status 400, no body, the error as a string
                orjson.dumps(
                    {
                        "id": "vllm-1",
                        "custom_id": cids[1],
                        "response": {"status_code": 400, "request_id": "vllm-batch-1"},
                        "error": "This model's maximum context length is 2048 tokens.",
                    }
                ),
                # OpenAI: the batch expired before this request ran
                orjson.dumps(
                    {
                        "id": "batch_req_3",
                        "custom_id": cids[2],
                        "response": None,
                        "error": {"code": "batch_expired", "message": "expired"},
                    }
                ),
            ]
        )
        + b"\n"
    )
    good = tmp_path / "good.jsonl"
    good.write_bytes(b"".join(lines[3:]))
    result = invoke("generate", run, "--batch-import", good, "--batch-import", errors)
    assert result.exit_code == 0, result.stderr
    assert "imported 17 rows (2 failed) from 2 files; 1 request never ran" in result.stderr
    failed = {r["kind"]: r for r in rows(run) if r["status"] == "failed"}
    assert set(failed) == {"server_error", "too_long"}
    assert failed["server_error"]["error"] == "batch result: HTTP 500: boom"
    assert "3 slots still missing" in result.stderr
    # The pending slots are exactly the ones a new export asks for.
    missing = tmp_path / "missing.jsonl"
    assert invoke("generate", run, "--batch-export", missing).exit_code == 0
    assert sorted(line["custom_id"] for line in _lines(missing)) == sorted(cids[:3])


# ---------------------------------------------------------------- 3. submit and collect


def test_batch_submits_polls_downloads_and_imports_one_batch_per_side(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    simulator.config.batch_delay = 0.2
    result = invoke("generate", run, "--batch", "--poll-interval", "0.05")
    assert result.exit_code == 0, result.stderr
    record = artifacts.read_json(run / artifacts.BATCHES, "batches")
    assert [(b["side"], b["status"], b["imported"]) for b in record["batches"]] == [
        ("A", "completed", True),
        ("B", "completed", True),
    ]
    assert simulator.batches_created == 2
    assert len(rows(run)) == 18
    assert (run / artifacts.TRIALS).exists()
    # A rerun finds everything imported and submits nothing.
    again = invoke("generate", run, "--batch", "--poll-interval", "0.05")
    assert again.exit_code == 0
    assert simulator.batches_created == 2
    assert len(rows(run)) == 18


def test_expired_batch_imports_what_finished_reports_the_rest_and_rerun_submits_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    simulator.config.batch_expire_next = 1  # side A's batch expires half done
    simulator.config.batch_fail_every = 4  # and every 4th request of a batch fails
    result = invoke("generate", run, "--batch", "--poll-interval", "0.01")
    assert result.exit_code == 3
    assert "expired, imported" in result.stderr
    assert "never ran" in result.stderr
    assert "slot(s) still unanswered after the batch" in result.stderr
    assert "--batch" in result.stderr
    simulator.config.batch_fail_every = None
    result = invoke("generate", run, "--batch", "--poll-interval", "0.01")
    assert result.exit_code == 0, result.stderr
    ok = [r for r in rows(run) if r["status"] == "ok"]
    assert len(ok) == len({(r["trial"], r["slot"]) for r in ok}) == 18
    assert simulator.batches_created == 4  # A, B, then A's and B's remainders
    assert simulator.stats()["answered_twice"] == 0


_KILLER = """
import os, signal, sys
from blindtest.transport import batch_run
stage = sys.argv[1]
def kill(step):
    if step == stage:
        os.kill(os.getpid(), signal.SIGKILL)
batch_run.CHECKPOINT = kill
from blindtest.cli import cli
cli.main(["generate", sys.argv[2], "--batch", "--poll-interval", "0.05", "-q"],
         prog_name="blindtest")
"""


@pytest.mark.parametrize(
    "stage",
    ["uploaded", "created, not yet recorded", "created", "polled", "downloaded", "imported"],
)
def test_done_killed_at_each_stage_a_rerun_answers_every_slot_once_no_batch_twice(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, stage: str
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    simulator.config.batch_delay = 0.15
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    killed = subprocess.run(
        [sys.executable, "-c", _KILLER, stage, str(run)], env=env, capture_output=True
    )
    assert killed.returncode == -9, killed.stderr
    rerun = subprocess.run(
        [sys.executable, "-c", _KILLER, "never", str(run)], env=env, capture_output=True
    )
    assert rerun.returncode == 0, rerun.stderr
    ok = [r for r in rows(run) if r["status"] == "ok"]
    assert len(ok) == len({(r["trial"], r["slot"]) for r in ok}) == 18
    assert (run / artifacts.TRIALS).exists()
    assert simulator.batches_created == 2  # one per side, never a second
    assert simulator.stats()["answered_twice"] == 0
    record = artifacts.read_json(run / artifacts.BATCHES, "batches")
    assert len(record["batches"]) == 2
    assert all(b["imported"] for b in record["batches"])


# ------------------------------------------------------------------------ 4. Anthropic


def test_anthropic_export_and_results_import(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--max-tokens", "300", trials=6)
    out = tmp_path / "anthropic.jsonl"
    result = invoke("generate", run, "--batch-export", out, "--batch-format", "anthropic")
    assert result.exit_code == 0, result.stderr
    lines = _lines(out)
    assert len(lines) == 18
    for line in lines:
        assert set(line) == {"custom_id", "params"}
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", line["custom_id"])
        params = line["params"]
        assert params["max_tokens"] == 300
        assert "seed" not in params
        assert all(m["role"] != "system" for m in params["messages"])
    results = []
    for n, line in enumerate(lines):
        cid = line["custom_id"]
        if n == 0:
            result_body: dict[str, Any] = {"type": "expired"}
        elif n == 1:
            result_body = {
                "type": "errored",
                "error": {
                    "type": "error",
                    "error": {"type": "overloaded_error", "message": "Overloaded"},
                },
            }
        else:
            result_body = {
                "type": "succeeded",
                "message": {
                    "id": f"msg_{n}",
                    "type": "message",
                    "role": "assistant",
                    "model": line["params"]["model"],
                    "content": [{"type": "text", "text": f"Answer number {n}."}],
                    "stop_reason": "max_tokens" if n == 2 else "end_turn",
                    "usage": {"input_tokens": 11, "output_tokens": 3},
                },
            }
        results.append(orjson.dumps({"custom_id": cid, "result": result_body}))
    path = tmp_path / "anthropic-results.jsonl"
    path.write_bytes(b"\n".join(results) + b"\n")
    result = invoke("generate", run, "--batch-import", path)
    assert result.exit_code == 0, result.stderr
    assert "imported 17 rows (1 failed) from 1 file; 1 request never ran" in result.stderr
    got = {(r["trial"], r["slot"]): r for r in rows(run)}
    ok = [r for r in got.values() if r["status"] == "ok"]
    assert len(ok) == 16
    assert {r["usage"]["total_tokens"] for r in ok} == {14}
    assert sum(r["kind"] == "length" for r in ok) == 1
    assert all(r["seed"] is None for r in got.values())  # Anthropic takes no seed
    failed = [r for r in got.values() if r["status"] == "failed"]
    assert failed[0]["error"] == "batch result: Overloaded"


def test_batch_submit_refuses_the_anthropic_format(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    result = invoke("generate", run, "--batch", "--batch-format", "anthropic")
    assert result.exit_code == 2
    assert "--batch speaks OpenAI's Batch API" in result.stderr
    assert not (run / artifacts.BATCHES).exists()


# ------------------------------------------------------------------ prices, keys, laundering


def test_batch_prices_given_on_import_are_recorded_and_cost_the_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _exported_and_answered(invoke, tmp_path, simulator, run)
    result = invoke(
        "generate", run, "--batch-import", results, "--price-a", "1.25,5", "--price-b", "0,0"
    )
    assert result.exit_code == 0, result.stderr
    generation = artifacts.read_json(run / artifacts.GENERATION, "generation")
    assert generation["prices"]["A"] == {"input": 1.25, "output": 5.0}
    a = generation["roles"]["A"]
    expected = (a["prompt_tokens"] * 1.25 + a["completion_tokens"] * 5) / 1e6
    assert a["cost"] == pytest.approx(expected)
    assert generation["complete"] is True


def test_batch_api_refusing_the_key_is_exit_3_in_one_line_without_the_key(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    simulator.config.api_key = "simkey-the-right-one"
    monkeypatch.setenv("OPENAI_API_KEY", "simkey-a-wrong-one-0123456789")
    result = invoke("generate", run, "--batch", "--poll-interval", "0")
    assert result.exit_code == 3
    assert "batch API (upload at http://127.0.0.1:" in result.stderr
    assert "HTTP 401" in result.stderr
    assert "simkey-a-wrong-one-0123456789" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (run / artifacts.BATCHES).exists()
    assert simulator.batches_created == 0


def test_laundering_follows_a_batch_live(
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
    result = invoke("generate", run, "--batch", "--poll-interval", "0")
    assert result.exit_code == 0, result.stderr
    assert "18 answers still to launder: " in result.stderr
    assert not (run / artifacts.TRIALS).exists()
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert sum(r.get("stage") == "launder" for r in rows(run)) == 18
    assert (run / artifacts.TRIALS).exists()


def test_export_over_the_request_limit_writes_numbered_parts_that_import_together(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    import blindtest.transport.batch

    monkeypatch.setattr(blindtest.transport.batch, "MAX_REQUESTS", 7)
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    result = invoke("generate", run, "--batch-export", tmp_path / "batch.jsonl")
    assert result.exit_code == 0, result.stderr
    parts = [tmp_path / f"batch.part{n}.jsonl" for n in (1, 2, 3)]
    assert [len(_lines(p)) for p in parts] == [7, 7, 4]
    assert not (tmp_path / "batch.jsonl").exists()
    outputs = []
    for n, part in enumerate(parts, start=1):
        output, _ = through_batch_api(simulator, part.read_bytes())
        (tmp_path / f"out{n}.jsonl").write_bytes(output)
        outputs += ["--batch-import", tmp_path / f"out{n}.jsonl"]
    result = invoke("generate", run, *outputs)
    assert result.exit_code == 0, result.stderr
    assert "imported 18 rows (0 failed) from 3 files" in result.stderr
    assert (run / artifacts.TRIALS).exists()
