"""An answer is reused only for the request that produced it: each responses.jsonl row records
the hash of its request (or of the file it was read from); a row whose slot now asks for
something else is refused on resume (or asked again with --refetch-changed) and fails
bt-verify."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
from test_from_dirs import candidates

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke, files_in
from generate_runs import make_design, rows


def edit_design(run: Path, change: Any) -> None:
    """Edit design.json by hand and write its hash again (what a user would do)."""
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    change(design)
    data = orjson.dumps(design, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    (run / artifacts.DESIGN).write_bytes(data)
    (run / "design.sha256").write_text(hashlib.sha256(data).hexdigest() + "\n")


def b_to_large(design: dict[str, Any]) -> None:
    design["models"]["B"]["model"] = "sim-large"


def snapshot(run: Path) -> dict[str, bytes]:
    return {name: (run / name).read_bytes() for name in files_in(run)}


def test_each_row_records_the_sha256_of_the_request_body_the_server_received(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair")
    assert invoke("generate", run, "--quiet").exit_code == 0
    received = {
        hashlib.sha256(orjson.dumps(r.json(), option=orjson.OPT_SORT_KEYS)).hexdigest()
        for r in simulator.requests
    }
    recorded = {row["request_sha256"] for row in rows(run)}
    assert recorded == received
    assert len(recorded) == 12


def test_an_edited_model_refuses_the_rerun_naming_the_count_the_side_and_the_fix(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", trials=10)
    assert invoke("generate", run, "--quiet").exit_code == 0
    edit_design(run, b_to_large)
    before = snapshot(run)
    simulator.reset()
    result = invoke("generate", run)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.strip() == (
        "blindtest: error: responses.jsonl: 10 answers on disk were made for other requests "
        "than their slots make now (side B: 10; the design changed since they were recorded); "
        "use a new run directory, or rerun with --refetch-changed to ask for those slots "
        "again (the old rows stay in responses.jsonl, no longer counted)"
    )
    assert snapshot(run) == before  # nothing written
    assert simulator.requests == []  # nothing asked
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert (
        "responses.jsonl: 10 of the answers that count were made for another request than the "
        "design asks now (it changed since): trial 1 slot"
    ) in verified.stdout
    assert "verified" not in verified.stdout.splitlines()[-1]


def test_refetch_changed_asks_only_the_changed_slots_again_and_keeps_the_old_rows(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", trials=10)
    assert invoke("generate", run, "--quiet").exit_code == 0
    old = rows(run)
    edit_design(run, b_to_large)
    simulator.reset()
    result = invoke("generate", run, "--refetch-changed")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "asking again for 10 slots whose answer on disk was made for another request "
        "(side B: 10); the old rows stay in responses.jsonl, no longer counted"
    )
    assert {r.json()["model"] for r in simulator.requests} == {"sim-large"}
    assert len(simulator.requests) == 10
    now = rows(run)
    assert now[: len(old)] == old  # appended, never rewritten
    assert {row["model"] for row in now[len(old) :]} == {"sim-large"}
    trials = (run / artifacts.TRIALS).read_bytes()
    assert all(row["text"].encode() not in trials for row in old if row["side"] == "B")
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.stdout
    # Once asked again, a rerun has nothing to fetch.
    again = invoke("generate", run)
    assert again.exit_code == 0, again.stderr
    assert again.stderr.startswith("nothing to fetch (30 rows on disk)")


def test_an_edited_side_parameter_is_a_changed_request_too(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", trials=6)
    assert invoke("generate", run, "--quiet").exit_code == 0

    def set_top_p(design: dict[str, Any]) -> None:
        design["models"]["A"]["extra_params"] = {"top_p": 0.5}

    edit_design(run, set_top_p)
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "6 answers on disk were made for other requests" in result.stderr
    assert "(side A: 6;" in result.stderr


def test_rows_without_a_request_hash_still_verify_and_are_checked_by_their_model(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", trials=6)
    assert invoke("generate", run, "--quiet").exit_code == 0
    path = run / artifacts.RESPONSES
    older = [{k: v for k, v in row.items() if k != "request_sha256"} for row in rows(path.parent)]
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in older))
    assert invoke("verify", run).exit_code == 0
    rerun = invoke("generate", run)
    assert rerun.exit_code == 0, rerun.stderr
    assert rerun.stderr.startswith("nothing to fetch (12 rows on disk)")
    edit_design(run, b_to_large)
    refused = invoke("generate", run)
    assert refused.exit_code == 2
    assert "6 answers on disk were made for other requests" in refused.stderr
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "responses.jsonl trial" in verified.stdout
    assert '/model: recorded "sim-small", recomputed "sim-large"' in verified.stdout


def test_batch_export_refuses_changed_answers_and_imported_rows_record_the_exported_body(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", trials=6)
    exported = tmp_path / "batch.jsonl"
    assert invoke("generate", run, "--batch-export", exported).exit_code == 0
    lines = [orjson.loads(line) for line in exported.read_bytes().splitlines()]
    bodies = {
        line["custom_id"]: hashlib.sha256(
            orjson.dumps(line["body"], option=orjson.OPT_SORT_KEYS)
        ).hexdigest()
        for line in lines
    }
    assert invoke("generate", run, "--quiet").exit_code == 0  # answered live instead
    assert {row["request_sha256"] for row in rows(run)} == set(bodies.values())
    edit_design(run, b_to_large)
    refused = invoke("generate", run, "--batch-export", tmp_path / "again.jsonl")
    assert refused.exit_code == 2
    assert "6 answers on disk were made for other requests" in refused.stderr
    assert not (tmp_path / "again.jsonl").exists()
    both = invoke("generate", run, "--refetch-changed", "--batch-export", tmp_path / "x.jsonl")
    assert both.exit_code == 2
    assert both.stderr.strip() == (
        "blindtest: error: --refetch-changed asks live: give it without --batch-export, "
        "--batch-import and --batch"
    )


def test_refetched_answers_are_laundered_again_and_the_run_verifies(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    launder = ("--launder", "sim-launder", "--launder-url", simulator.base_url)
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", *launder, trials=6)
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert all("request_sha256" in row for row in rows(run))
    edit_design(run, b_to_large)
    refused = invoke("generate", run)
    assert refused.exit_code == 2
    assert "(side B: 6; the design changed" in refused.stderr  # not their laundering again
    simulator.reset()
    result = invoke("generate", run, "--refetch-changed", "--quiet")
    assert result.exit_code == 0, result.stderr
    models = sorted(r.json()["model"] for r in simulator.requests)
    assert models == ["sim-large"] * 6 + ["sim-launder"] * 6
    assert invoke("verify", run).exit_code == 0


def test_an_edited_launder_model_refuses_the_laundered_rows(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    launder = ("--launder", "sim-launder", "--launder-url", simulator.base_url)
    make_design(invoke, run, simulator, tmp_path, "--protocol", "pair", *launder, trials=6)
    assert invoke("generate", run, "--quiet").exit_code == 0

    def other_launderer(design: dict[str, Any]) -> None:
        design["normalization"]["launder"]["model"] = "sim-small"

    edit_design(run, other_launderer)
    refused = invoke("generate", run)
    assert refused.exit_code == 2
    assert "12 answers on disk were made for other requests" in refused.stderr
    assert "(laundering: 12;" in refused.stderr
    assert invoke("verify", run).exit_code == 1


def test_from_dirs_rows_record_the_hash_of_the_file_they_were_read_from(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = candidates(tmp_path, variants=False)
    run = tmp_path / "run"
    made = invoke("design", run, "--from-dirs", a, b, "--protocol", "pair", "--trials", "6")
    assert made.exit_code == 0, made.stderr
    assert invoke("generate", run, "--quiet").exit_code == 0
    folders = {"A": a, "B": b}
    for row in rows(run):
        data = (folders[row["side"]] / row["prompt_id"]).read_bytes()
        assert row["source_sha256"] == hashlib.sha256(data).hexdigest()
    assert invoke("verify", run).exit_code == 0

    def other_file(design: dict[str, Any]) -> None:
        design["source"]["files"]["q1.md"]["B"]["0"] = "0" * 64

    edit_design(run, other_file)
    refused = invoke("generate", run)
    assert refused.exit_code == 2
    assert "1 answer on disk was read from another file than its slot names now" in (refused.stderr)


def test_the_request_hash_of_an_unchanged_design_never_drifts() -> None:
    """Pinned: a change to how bodies are built changes every recorded hash, and with it every
    run on disk would stop resuming and verifying; such a change must be deliberate."""
    from blindtest.generation.requests import SlotRequests
    from blindtest.model.slots import Work, iter_slots

    from report_runs import make_design

    design = make_design("triangle", 20)
    requests = SlotRequests(design)
    first = Work(next(iter_slots(design)), "generate")
    body = requests.body(first)
    assert body["seed"] == 1561550794
    assert requests.determined_by(first) == (
        "request_sha256",
        hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest(),
    )
    assert requests.determined_by(first)[1] == (
        "8381eea8e3005d90ce57d1a363bc70b8b7b1b35d1891cc205d1a0cf00f26deaa"
    )


def test_batch_imported_rows_record_the_hash_of_the_body_exported_for_their_slot(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from test_generate_batch import _exported_and_answered

    run = tmp_path / "run"
    results = _exported_and_answered(invoke, tmp_path, simulator, run)
    exported = [orjson.loads(x) for x in (tmp_path / "run-in.jsonl").read_bytes().splitlines()]
    assert invoke("generate", run, "--batch-import", results).exit_code == 0
    by_slot = {(row["trial"], row["slot"]): row["request_sha256"] for row in rows(run)}
    for line in exported:
        trial, slot = (int(part[1:]) for part in line["custom_id"].split("-")[-2:])
        body = orjson.dumps(line["body"], option=orjson.OPT_SORT_KEYS)
        assert by_slot[(trial, slot)] == hashlib.sha256(body).hexdigest()
    assert invoke("verify", run).exit_code == 0
    edit_design(run, b_to_large)
    refused = invoke("generate", run, "--batch-import", results)
    assert refused.exit_code == 2
    assert "answers on disk were made for other requests" in refused.stderr
