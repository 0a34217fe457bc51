""" "a slot already answered is refused with a count, never written twice; a
partial import is fine and a later one fills the rest". An import interrupted after writing
some rows (Ctrl-C, kill -9) is completed by running the same command again: what is already
imported is skipped with a count, the rest is imported. Foreign, unknown or tampered results,
and a slot or comparison answered twice in the files with different results, still refuse
the whole import with nothing written. For bt-generate and for an LLM judge alike."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
from test_llm_judge_batch import exported_and_answered, judge, lines, make_run

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from endpoint_fixtures import through_batch_api
from generate_runs import make_design, rows

#: Runs a command of the CLI and kills itself (SIGKILL, as kill -9) when it is about to
#: append its (k+1)-th row to a JSONL artifact: an import cut short mid-way, deterministically.
_KILLER = """
import os, signal, sys
from blindtest.rundir import artifacts
limit, written = int(sys.argv[1]), [0]
append = artifacts.JsonlAppender.append
def killing(self, record):
    if written[0] == limit:
        os.kill(os.getpid(), signal.SIGKILL)
    append(self, record)
    written[0] += 1
artifacts.JsonlAppender.append = killing
from blindtest.cli import cli
cli.main(sys.argv[2:], prog_name="blindtest")
"""


def _killed(limit: int, *argv: Any) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    for name in ("OPENAI_API_KEY", "BLINDTEST_JUDGE_KEY"):
        env.pop(name, None)
    command = [sys.executable, "-c", _KILLER, str(limit), *map(str, argv)]
    return subprocess.run(command, env=env, capture_output=True)


def _slot_results(invoke: Invoke, tmp_path: Path, simulator: Simulator, run: Path) -> Path:
    """A design of 20 trials (60 slots) in ``run``, exported and answered by the simulator's
    Batch API: the results file."""
    make_design(invoke, run, simulator, tmp_path, trials=20)
    requests = tmp_path / f"{run.name}-in.jsonl"
    assert invoke("generate", run, "--batch-export", requests).exit_code == 0
    results = tmp_path / f"{run.name}-out.jsonl"
    results.write_bytes(through_batch_api(simulator, requests.read_bytes())[0])
    return results


def _first_ten_imported(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, run: Path
) -> list[bytes]:
    """The run's batch results, their first ten lines imported; the lines."""
    results = _slot_results(invoke, tmp_path, simulator, run)
    lines = results.read_bytes().splitlines(keepends=True)
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"".join(lines[:10]))
    assert invoke("generate", run, "--batch-import", first).exit_code == 0
    return lines


def _reference(invoke: Invoke, tmp_path: Path, simulator: Simulator, results: Path) -> Path:
    """The same design in another directory, imported in one go (the same design hash, so
    the same results fit)."""
    reference = tmp_path / "reference"
    make_design(invoke, reference, simulator, tmp_path, trials=20)
    done = invoke("generate", reference, "--batch-import", results)
    assert done.exit_code == 0, done.stderr
    return reference


def _once_each(run: Path) -> None:
    counted = Counter((r["trial"], r["slot"]) for r in rows(run))
    assert len(counted) == 60
    assert set(counted.values()) == {1}


# ------------------------------------------------------------------------------ bt-generate


def test_generate_import_killed_9_partway_then_the_same_command_completes_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _slot_results(invoke, tmp_path, simulator, run)
    killed = _killed(25, "generate", run, "--batch-import", results)
    assert killed.returncode == -9, killed.stderr
    assert len(rows(run)) == 25  # cut short: 25 of 60 rows written, no trials.jsonl
    assert not (run / artifacts.TRIALS).exists()
    again = invoke("generate", run, "--batch-import", results)
    assert again.exit_code == 0, again.stderr
    assert "imported 35 rows (0 failed) from 1 file; 25 already imported, skipped" in (again.stderr)
    _once_each(run)
    reference = _reference(invoke, tmp_path, simulator, results)
    assert artifacts.read_design_hash(reference) == artifacts.read_design_hash(run)
    # Byte for byte what an uninterrupted import writes (rows carry no timestamp).
    for name in (artifacts.RESPONSES, artifacts.TRIALS):
        assert (run / name).read_bytes() == (reference / name).read_bytes()
    # And once more: nothing left to do, nothing written.
    before = (run / artifacts.RESPONSES).read_bytes()
    third = invoke("generate", run, "--batch-import", results)
    assert third.exit_code == 0, third.stderr
    assert "imported 0 rows (0 failed) from 1 file; 60 already imported, skipped" in third.stderr
    assert (run / artifacts.RESPONSES).read_bytes() == before


def test_generate_import_of_the_first_lines_then_the_whole_file_fills_the_rest(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _slot_results(invoke, tmp_path, simulator, run)
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"".join(results.read_bytes().splitlines(keepends=True)[:17]))
    part = invoke("generate", run, "--batch-import", first)
    assert part.exit_code == 0, part.stderr
    assert "43 slots still missing; export just those:" in part.stderr
    whole = invoke("generate", run, "--batch-import", results)
    assert whole.exit_code == 0, whole.stderr
    assert "imported 43 rows (0 failed) from 1 file; 17 already imported, skipped" in (whole.stderr)
    assert "blinded trials" in whole.stderr
    _once_each(run)
    reference = _reference(invoke, tmp_path, simulator, results)
    assert (run / artifacts.RESPONSES).read_bytes() == (
        reference / artifacts.RESPONSES
    ).read_bytes()


def test_generate_one_foreign_line_refuses_the_whole_import_nothing_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    lines_ = _first_ten_imported(invoke, tmp_path, simulator, run)
    before = {name: (run / name).read_bytes() for name in (artifacts.RESPONSES, "generation.json")}
    sha = artifacts.read_design_hash(run)[:16]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"".join(lines_[:-1]) + lines_[-1].replace(sha.encode(), b"0" * 16))
    refused = invoke("generate", run, "--batch-import", mixed)
    assert refused.exit_code == 2
    assert "refused 1 batch result (1 for another run, 0 for slots this design" in refused.stderr
    assert "nothing written" in refused.stderr
    assert refused.stderr.count("\n") == 1
    for name, data in before.items():
        assert (run / name).read_bytes() == data


def test_generate_a_slot_answered_twice_in_the_files_with_different_text_refuses_all(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    results = _slot_results(invoke, tmp_path, simulator, run)
    lines_ = results.read_bytes().splitlines(keepends=True)
    other = orjson.loads(lines_[4])
    other["response"]["body"]["choices"][0]["message"]["content"] = "Another answer entirely."
    second = tmp_path / "second.jsonl"
    second.write_bytes(orjson.dumps(other) + b"\n")
    refused = invoke("generate", run, "--batch-import", results, second)
    assert refused.exit_code == 2
    assert "1 answering a slot again with a different result" in refused.stderr
    assert f"{second}:1 answers trial" in refused.stderr
    assert not (run / artifacts.RESPONSES).exists()
    # The same file twice (same content): read once, imported once.
    twice = invoke("generate", run, "--batch-import", results, results)
    assert twice.exit_code == 0, twice.stderr
    assert "imported 60 rows" in twice.stderr
    assert "60 given twice in these files, read once" in twice.stderr
    _once_each(run)


def test_generate_a_slot_already_answered_differently_is_skipped_the_stored_stands(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    lines_ = _first_ten_imported(invoke, tmp_path, simulator, run)
    stored = {(r["trial"], r["slot"]): r["text"] for r in rows(run)}
    # Another batch's results: three slots already answered, with other texts.
    other = []
    for line in lines_[:3]:
        record = orjson.loads(line)
        record["response"]["body"]["choices"][0]["message"]["content"] = "A second draw."
        other.append(orjson.dumps(record) + b"\n")
    another = tmp_path / "another.jsonl"
    another.write_bytes(b"".join(other) + b"".join(lines_[10:]))
    done = invoke("generate", run, "--batch-import", another)
    assert done.exit_code == 0, done.stderr
    assert (
        "imported 50 rows (0 failed) from 1 file; 3 already answered with a different "
        "result; the stored answers stand" in done.stderr
    )
    _once_each(run)
    now = {(r["trial"], r["slot"]): r["text"] for r in rows(run)}
    assert all(now[key] == text for key, text in stored.items())
    assert "A second draw." not in now.values()


# ------------------------------------------------------------------------- an LLM judge


def _without_at(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k != "at"} for row in lines(path)]


def test_judge_import_killed_9_partway_then_the_same_command_completes_it(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=8)
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "all")
    argv = ("judge", run, "--judge", "llm:sim-judge-fair", "--out", out, "--batch-import")
    # 5 records: trials 1 and 2 (both passes) and trial 3's first pass only.
    killed = _killed(5, *argv, results)
    assert killed.returncode == -9, killed.stderr
    assert len(lines(out)) == 5
    again = judge(invoke, run, out, "--batch-import", results)
    assert again.exit_code == 0, again.output
    assert "imported 6 comparisons (0 failed) from 1 file; 4 results already imported, skipped" in (
        again.stderr
    )
    picks = lines(out)
    assert Counter((r["trial"], r["pass"]) for r in picks) == {
        (t, p): 1 for t in range(1, 9) for p in (1, 2)
    }
    reference = run / "picks-ref.jsonl"
    assert judge(invoke, run, reference, "--batch-import", results).exit_code == 0
    assert _without_at(out) == _without_at(reference)
    before = out.read_bytes()
    third = judge(invoke, run, out, "--batch-import", results)
    assert third.exit_code == 0, third.output
    assert (
        "imported 0 comparisons (0 failed) from 1 file; 16 results already imported" in third.stderr
    )
    assert out.read_bytes() == before


def test_judge_import_of_some_lines_then_the_whole_file_fills_the_rest(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "all")
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"".join(results.read_bytes().splitlines(keepends=True)[:4]))
    assert judge(invoke, run, out, "--batch-import", first).exit_code == 0
    whole = judge(invoke, run, out, "--batch-import", results)
    assert whole.exit_code == 0, whole.output
    assert "imported 4 comparisons (0 failed) from 1 file; 4 results already imported, skipped" in (
        whole.stderr
    )
    assert "still missing" not in whole.stderr
    reference = run / "picks-ref.jsonl"
    assert judge(invoke, run, reference, "--batch-import", results).exit_code == 0
    assert _without_at(out) == _without_at(reference)


def test_judge_one_foreign_line_refuses_the_whole_import_nothing_written(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    other = make_run(invoke, simulator.base_url, tmp_path / "other", trials=4, seed="other")
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "mine")
    _, foreign = exported_and_answered(invoke, simulator, other, other / "p.jsonl", "theirs")
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"".join(results.read_bytes().splitlines(keepends=True)[:2]))
    assert judge(invoke, run, out, "--batch-import", first).exit_code == 0
    before = out.read_bytes()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(results.read_bytes() + foreign.read_bytes().splitlines(keepends=True)[0])
    refused = judge(invoke, run, out, "--batch-import", mixed)
    assert refused.exit_code == 2
    assert "refused 1 batch result (1 for another run or judge model" in refused.stderr
    assert "nothing written" in refused.stderr
    assert out.read_bytes() == before
    # A tampered line (the body hash of a trial already judged): refused too.
    tampered = [orjson.loads(line) for line in results.read_bytes().splitlines()]
    tampered[0]["custom_id"] = tampered[0]["custom_id"][:-8] + "00000000"
    path = tmp_path / "tampered.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in tampered))
    refused = judge(invoke, run, out, "--batch-import", path)
    assert refused.exit_code == 2
    assert "1 for comparisons this judge does not have" in refused.stderr
    assert out.read_bytes() == before


def test_judge_a_pass_answered_twice_in_the_files_with_different_text_refuses_all(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "mine")
    record = orjson.loads(results.read_bytes().splitlines()[2])
    body = record["response"]["body"]
    verdict = orjson.loads(body["choices"][0]["message"]["content"])
    verdict["justification"] = "On second thought, something else."
    body["choices"][0]["message"]["content"] = orjson.dumps(verdict).decode()
    second = tmp_path / "second.jsonl"
    second.write_bytes(orjson.dumps(record) + b"\n")
    refused = judge(invoke, run, out, "--batch-import", results, second)
    assert refused.exit_code == 2
    assert "1 answering a comparison again with a different result" in refused.stderr
    assert not out.exists()
    # Once the first is imported, the other result for the same pass is skipped: it stands.
    assert judge(invoke, run, out, "--batch-import", results).exit_code == 0
    before = out.read_bytes()
    later = judge(invoke, run, out, "--batch-import", second)
    assert later.exit_code == 0, later.output
    assert "1 already answered with a different result; the stored answers stand" in later.stderr
    assert out.read_bytes() == before


def test_judge_failed_comparisons_imported_again_are_not_written_twice(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    model = "sim-judge-malformed"
    _, results = exported_and_answered(invoke, simulator, run, out, "bad", model=model)
    argv = ("judge", run, "--judge", f"llm:{model}", "--out", out, "--batch-import", results)
    killed = _killed(3, *argv)
    assert killed.returncode == -9, killed.stderr
    again = judge(invoke, run, out, "--batch-import", results, model=model)
    assert again.exit_code == 3, again.output
    assert "6 comparison(s) failed" in again.stderr
    assert len(lines(out)) == 6
    assert Counter(r["trial"] for r in lines(out)) == {t: 1 for t in range(1, 7)}
    # Trials 1-3 failed in the killed run: their 6 results made those rows; skipped now.
    assert "imported 3 comparisons (3 failed) from 1 file; 6 results already imported, skipped" in (
        again.stderr
    )


def test_judge_sequential_design_stopped_exports_nothing_more(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--demo", "--protocol", "triangle", "--trials", 40, "--sequential",
        "--a", "sim-large", "--b", "sim-small", "--a-url", simulator.base_url,
        "--b-url", simulator.base_url, "--seed", "i15seq",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    out = run / "picks-j.jsonl"
    requests, results = exported_and_answered(invoke, simulator, run, out, "seq")
    assert len(lines(requests)) == 40  # the rule is not met yet: every trial may be needed
    imported = judge(invoke, run, out, "--batch-import", results)
    assert imported.exit_code == 0, imported.output
    judged = len(lines(out))
    assert f"imported {judged} comparisons (0 failed)" in imported.stderr
    assert judged < 40
    assert "comparisons past the sequential stop not recorded" in imported.stderr
    assert "still missing" not in imported.stderr
    again = tmp_path / "again.jsonl"
    exported = judge(invoke, run, out, "--batch-export", again)
    assert exported.exit_code == 0, exported.output
    assert "nothing to export: the sequential design stopped" in exported.stderr
    assert not again.exists()
    rerun = judge(invoke, run, out, "--batch-import", results)
    assert rerun.exit_code == 0, rerun.output
    assert len(lines(out)) == judged
