"""Bt-judge --judge llm:M --batch-export (both passes of
the position swap, the exact live body), --batch-import (the live judge's verdict parsing,
failure rows and resume logic; foreign or unknown results refused with counts,
nothing written) and --batch (submit and collect, resumable at every step), all through the
simulator's Batch API and its judge models."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import Simulator

from conftest import Invoke
from endpoint_fixtures import through_batch_api

JUDGE = "sim-judge-fair"
#: What a batch-imported pick must share with the live run's.
FIELDS = ("pick", "verdict", "raw_response", "tokens", "confidence", "reason",
          "position_mapping", "position_consistent", "judge_kind", "judge_model")  # fmt: skip


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def make_run(
    invoke: Invoke,
    url: str,
    run: Path,
    protocol: str = "preference",
    trials: int = 10,
    seed: str = "i15j",
) -> Path:
    made = invoke(
        "design", run, "--demo", "--protocol", protocol, "--trials", trials,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", seed,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    return run


def judge(
    invoke: Invoke, run: Path, out: Path, *extra: Any, model: str = JUDGE, url: str = ""
) -> Any:
    args: list[Any] = ["judge", run, "--judge", f"llm:{model}", "--out", out, *extra]
    if url:
        args += ["--judge-url", url]
    return invoke(*args)


def exported_and_answered(
    invoke: Invoke, simulator: Simulator, run: Path, out: Path, name: str, model: str = JUDGE
) -> tuple[Path, Path]:
    requests = run.parent / f"{name}-in.jsonl"
    made = judge(invoke, run, out, "--batch-export", requests, model=model, url=simulator.base_url)
    assert made.exit_code == 0, made.output
    output, errors = through_batch_api(simulator, requests.read_bytes())
    results = run.parent / f"{name}-out.jsonl"
    results.write_bytes(output + errors)
    return requests, results


def by_pass(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["trial"], r.get("pass", 1)): r for r in lines(path) if "pick" in r}


def test_judge_export_holds_both_passes_the_exact_live_body_and_a_telling_custom_id(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    requests = tmp_path / "in.jsonl"
    result = judge(invoke, run, run / "picks-j.jsonl", "--batch-export", requests)
    assert result.exit_code == 0, result.output
    assert "8 requests (4 comparisons, both passes)" in result.stderr
    assert "--batch-import RESULTS.jsonl" in result.stderr
    exported = lines(requests)
    assert len(exported) == 8
    assert not (run / "picks-j.jsonl").exists()
    sha = (run / "design.sha256").read_text().split()[0]
    for line in exported:
        assert line["url"] == "/v1/chat/completions"
        assert line["custom_id"].startswith(f"bt-{sha[:16]}-t")
        assert len(line["custom_id"]) <= 64
        assert line["body"]["response_format"]["type"] == "json_schema"
        assert line["body"]["model"] == JUDGE
    # The very body a live judge sends, for both passes of a trial.
    live = judge(invoke, run, run / "picks-live.jsonl", url=simulator.base_url)
    assert live.exit_code == 0, live.output
    sent = [orjson.loads(r.body) for r in simulator.requests]
    sent = [b for b in sent if b.get("model") == JUDGE]

    def key(body: Any) -> bytes:
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)

    assert sorted(map(key, sent)) == sorted(key(line["body"]) for line in exported)
    # Anthropic's format: the same requests, its own shape.
    anthropic = tmp_path / "anthropic.jsonl"
    made = judge(invoke, run, run / "picks-j.jsonl", "--batch-export", anthropic,
                 "--batch-format", "anthropic")  # fmt: skip
    assert made.exit_code == 0, made.output
    first = lines(anthropic)[0]
    assert set(first) == {"custom_id", "params"}
    assert first["params"]["model"] == JUDGE


def test_judge_done_export_batch_import_gives_the_picks_of_a_live_run(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=12)
    live = judge(invoke, run, run / "picks-live.jsonl", url=simulator.base_url)
    assert live.exit_code == 0, live.output
    _, results = exported_and_answered(invoke, simulator, run, run / "picks-batch.jsonl", "b")
    imported = judge(invoke, run, run / "picks-batch.jsonl", "--batch-import", results)
    assert imported.exit_code == 0, imported.output
    assert "imported 12 comparisons (0 failed)" in imported.stderr
    assert "The LLM judge sim-judge-fair judged 12 of 12 trials" in imported.stdout
    a, b = by_pass(run / "picks-live.jsonl"), by_pass(run / "picks-batch.jsonl")
    assert len(a) == len(b) == 24
    for key, row in a.items():
        other = b[key]
        for name in FIELDS:
            assert other.get(name) == row.get(name), (key, name)
    for picks in ("picks-live.jsonl", "picks-batch.jsonl"):
        analysed = invoke("analyze", run, "--picks", run / picks, "--force")
        assert analysed.exit_code in (0, 1), analysed.output
    # Everything judged: a second import of the same file skips every result, writes nothing.
    before = (run / "picks-batch.jsonl").read_bytes()
    again = judge(invoke, run, run / "picks-batch.jsonl", "--batch-import", results)
    assert again.exit_code == 0, again.output
    assert (
        "imported 0 comparisons (0 failed) from 1 file; 24 results already imported" in again.stderr
    )
    assert (run / "picks-batch.jsonl").read_bytes() == before
    assert (
        "nothing to export"
        in judge(
            invoke, run, run / "picks-batch.jsonl", "--batch-export", tmp_path / "x.jsonl"
        ).stderr
    )


def test_judge_done_tampered_or_foreign_output_refused_with_a_count_nothing_written(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    other = make_run(invoke, simulator.base_url, tmp_path / "other", trials=4, seed="other")
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "mine")
    _, foreign = exported_and_answered(invoke, simulator, other, other / "p.jsonl", "theirs")
    _, another_judge = exported_and_answered(
        invoke, simulator, run, run / "p2.jsonl", "judge2", model="sim-judge-first"
    )
    rows = lines(results)
    tampered = tmp_path / "tampered.jsonl"
    rows[0]["custom_id"] = rows[0]["custom_id"].replace("-t", "-t9", 1)  # no such trial
    rows[1]["custom_id"] = rows[1]["custom_id"][:-8] + "00000000"  # another request's body
    rows[2]["custom_id"] = rows[2]["custom_id"].split("-p")[0] + "-s1"  # bt-generate's slot
    tampered.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    cases = [
        (tampered, "refused 3 batch results (0 for another run or judge model, 3 for "
                   "comparisons this judge does not have, 0 answering a comparison again"),
        (foreign, "refused 8 batch results (8 for another run or judge model"),
        (another_judge, "refused 8 batch results (8 for another run or judge model"),
    ]  # fmt: skip
    for path, said in cases:
        result = judge(invoke, run, out, "--batch-import", path)
        assert result.exit_code == 2, result.output
        assert said in result.stderr
        assert "nothing written" in result.stderr
        assert result.stderr.count("\n") == 1
        assert not out.exists()


def test_judge_partial_import_then_the_rest_missing_printed_with_its_export(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "all")
    rows = lines(results)
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    # trials whose two passes are both in the first file, and one pass of another trial
    first.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows[:5]))
    rest.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows[4:]))
    result = judge(invoke, run, out, "--batch-import", first)
    assert result.exit_code == 0, result.output
    assert "imported 2 comparisons (0 failed) from 1 file; 1 result left out" in result.stderr
    assert "4 comparisons still missing; export just those: " in result.stderr
    assert "--batch-export missing.jsonl" in result.stderr
    missing = tmp_path / "missing.jsonl"
    assert judge(invoke, run, out, "--batch-export", missing).exit_code == 0
    assert len(lines(missing)) == 8
    result = judge(invoke, run, out, "--batch-import", rest)
    assert result.exit_code == 0, result.output
    assert "imported 4 comparisons" in result.stderr
    assert len({r["trial"] for r in lines(out) if "pick" in r}) == 6


def test_judge_malformed_verdicts_are_failure_rows_exit_3_and_export_again(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    _, results = exported_and_answered(
        invoke, simulator, run, out, "bad", model="sim-judge-malformed"
    )
    result = judge(invoke, run, out, "--batch-import", results, model="sim-judge-malformed")
    assert result.exit_code == 3, result.output
    assert "6 comparison(s) failed and recorded as failure rows" in result.stderr
    failures = [r for r in lines(out) if "error" in r]
    assert len(failures) == 6
    assert all("no valid verdict after 1 answer" in r["error"] for r in failures)
    again = tmp_path / "again.jsonl"
    made = judge(invoke, run, out, "--batch-export", again, model="sim-judge-malformed")
    assert made.exit_code == 0
    assert len(lines(again)) == 12


def test_judge_pair_cannot_be_batched_exit_2_one_line(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", protocol="pair", trials=4)
    for mode in (["--batch-export", tmp_path / "x.jsonl"], ["--batch"]):
        result = judge(invoke, run, run / "p.jsonl", *mode, url=simulator.base_url)
        assert result.exit_code == 2
        assert "a pair judge cannot be batched" in result.stderr
        assert result.stderr.count("\n") == 1
        assert not (tmp_path / "x.jsonl").exists()
    bot = invoke("judge", run, "--judge", "bot:length", "--batch")
    assert bot.exit_code == 2
    assert "--batch: only for --judge llm:MODEL" in bot.stderr


def test_judge_triangle_batch_round_trip(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", protocol="triangle", trials=6)
    out = run / "picks-j.jsonl"
    requests, results = exported_and_answered(invoke, simulator, run, out, "tri")
    assert len(lines(requests)) == 6
    result = judge(invoke, run, out, "--batch-import", results)
    assert result.exit_code == 0, result.output
    assert len([r for r in lines(out) if "pick" in r]) == 6


def test_judge_batch_submits_polls_downloads_and_imports(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=8)
    out = run / "picks-j.jsonl"
    simulator.config.batch_delay = 0.1
    result = judge(invoke, run, out, "--batch", "--poll-interval", "0.05", url=simulator.base_url)
    assert result.exit_code == 0, result.output
    assert "judge: created batch" in result.stderr
    assert len(by_pass(out)) == 16
    record = orjson.loads((run / "picks-j.batches.json").read_bytes())
    assert record["judge_model"] == JUDGE
    assert [b["side"] for b in record["batches"]] == ["judge"]
    assert simulator.batches_created == 1
    again = judge(invoke, run, out, "--batch", "--poll-interval", "0.05", url=simulator.base_url)
    assert again.exit_code == 0, again.output
    assert simulator.batches_created == 1


_KILLER = """
import os, signal, sys
from blindtest.transport import batch_run
stage = sys.argv[1]
def kill(step):
    if step == stage:
        os.kill(os.getpid(), signal.SIGKILL)
batch_run.CHECKPOINT = kill
from blindtest.cli import cli
cli.main(["judge", sys.argv[2], "--judge", "llm:sim-judge-fair", "--judge-url", sys.argv[3],
          "--out", sys.argv[4], "--batch", "--poll-interval", "0.05", "-q"],
         prog_name="blindtest")
"""


@pytest.mark.parametrize(
    "stage",
    ["uploaded", "created, not yet recorded", "created", "polled", "downloaded", "imported"],
)
def test_judge_done_killed_at_each_stage_rerun_judges_each_once_no_batch_twice(
    invoke: Invoke, simulator: Simulator, tmp_path: Path, stage: str
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    simulator.config.batch_delay = 0.15
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    env.pop("OPENAI_API_KEY", None)
    env.pop("BLINDTEST_JUDGE_KEY", None)
    argv = [sys.executable, "-c", _KILLER]
    url = simulator.base_url
    killed = subprocess.run([*argv, stage, str(run), url, str(out)], env=env, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    rerun = subprocess.run([*argv, "never", str(run), url, str(out)], env=env, capture_output=True)
    assert rerun.returncode == 0, rerun.stderr
    picks = [r for r in lines(out) if "pick" in r]
    assert len(picks) == len({(r["trial"], r.get("pass")) for r in picks}) == 12
    assert simulator.batches_created == 1
    record = orjson.loads((run / "picks-j.batches.json").read_bytes())
    assert len(record["batches"]) == 1
    assert record["batches"][0]["imported"]


def test_judge_expired_batch_imports_whole_comparisons_and_a_rerun_submits_the_rest(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=8)
    out = run / "picks-j.jsonl"
    simulator.config.batch_expire_next = 1
    args = ("--batch", "--poll-interval", "0.01")
    result = judge(invoke, run, out, *args, url=simulator.base_url)
    assert result.exit_code == 3, result.output
    assert "4 comparison(s) still unjudged after the batch (0 failed)" in result.stderr
    assert "--batch-export missing.jsonl" in result.stderr
    assert len({r["trial"] for r in lines(out) if "pick" in r}) == 4
    again = judge(invoke, run, out, *args, url=simulator.base_url)
    assert again.exit_code == 0, again.output
    assert len(by_pass(out)) == 16
    assert simulator.batches_created == 2
    assert simulator.stats()["answered_twice"] == 0


def test_judge_export_split_into_parts_that_import_together(
    invoke: Invoke, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from blindtest.transport import batch

    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    monkeypatch.setattr(batch, "MAX_REQUESTS", 3)
    out = run / "picks-j.jsonl"
    result = judge(invoke, run, out, "--batch-export", tmp_path / "in.jsonl")
    assert result.exit_code == 0, result.output
    parts = [tmp_path / f"in.part{n}.jsonl" for n in (1, 2, 3)]
    assert [len(lines(p)) for p in parts] == [3, 3, 2]
    outputs = []
    for number, part in enumerate(parts, start=1):
        output, _ = through_batch_api(simulator, part.read_bytes())
        outputs.append(tmp_path / f"out{number}.jsonl")
        outputs[-1].write_bytes(output)
    imported = judge(invoke, run, out, "--batch-import", *outputs)
    assert imported.exit_code == 0, imported.output
    assert len(by_pass(out)) == 8


def test_judge_error_lines_are_failure_rows_and_exported_again(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=6)
    out = run / "picks-j.jsonl"
    simulator.config.batch_fail_every = 4  # requests 4, 8, 12 fail with a 500
    _, results = exported_and_answered(invoke, simulator, run, out, "errs")
    result = judge(invoke, run, out, "--batch-import", results)
    assert result.exit_code == 3, result.output
    assert "imported 6 comparisons (3 failed)" in result.stderr
    failures = [r for r in lines(out) if "error" in r]
    assert len(failures) == 3
    assert all("batch result: HTTP 500" in r["error"] for r in failures)
    again = tmp_path / "again.jsonl"
    assert judge(invoke, run, out, "--batch-export", again).exit_code == 0
    assert len(lines(again)) == 6  # both passes of the 3 failed comparisons


def test_judge_anthropic_results_imported(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", trials=4)
    live = judge(invoke, run, run / "picks-live.jsonl", url=simulator.base_url)
    assert live.exit_code == 0, live.output
    out = run / "picks-a.jsonl"
    _, results = exported_and_answered(invoke, simulator, run, out, "oa")
    anthropic = tmp_path / "anthropic-results.jsonl"
    rows = []
    for row in lines(results):  # the same answers, as Anthropic's results say them
        body = row["response"]["body"]
        usage = body["usage"]
        message = {
            "id": body["id"], "model": body["model"], "stop_reason": "end_turn",
            "content": [{"type": "text", "text": body["choices"][0]["message"]["content"]}],
            "usage": {"input_tokens": usage["prompt_tokens"],
                      "output_tokens": usage["completion_tokens"]},
        }  # fmt: skip
        rows.append({"custom_id": row["custom_id"],
                     "result": {"type": "succeeded", "message": message}})  # fmt: skip
    anthropic.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    imported = judge(invoke, run, out, "--batch-import", anthropic)
    assert imported.exit_code == 0, imported.output
    a, b = by_pass(run / "picks-live.jsonl"), by_pass(out)
    assert {k: (r["pick"], r["raw_response"], r["tokens"]) for k, r in a.items()} == {
        k: (r["pick"], r["raw_response"], r["tokens"]) for k, r in b.items()
    }


def test_batch_import_takes_several_files_after_one_flag(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", 4, "--a", "sim-large",
        "--b", "sim-small", "--a-url", simulator.base_url, "--b-url", simulator.base_url,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    requests = tmp_path / "in.jsonl"
    assert invoke("generate", run, "--batch-export", requests).exit_code == 0
    output, _ = through_batch_api(simulator, requests.read_bytes())
    halves = [tmp_path / "h1.jsonl", tmp_path / "h2.jsonl"]
    rows = output.splitlines(keepends=True)
    halves[0].write_bytes(b"".join(rows[:4]))
    halves[1].write_bytes(b"".join(rows[4:]))
    stray = invoke("generate", run, halves[0])
    assert stray.exit_code == 2
    assert "files to import follow --batch-import" in stray.stderr
    result = invoke("generate", run, "--batch-import", *halves)
    assert result.exit_code == 0, result.output
    assert "imported 8 rows (0 failed) from 2 files" in result.stderr
