"""the LLM judge (spec 003) end to end against the simulator's judge models:
bt-judge --judge llm:MODEL, structured output with fallback, failures and reruns, what each
record stores, the simulator judges' behaviours, --show-prompt and blindtest run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import Simulator
from blindtest.simulator.server import SimulatorConfig, running

from endpoint_fixtures import SIM_KEY_ENV
from llm_runs import judge_requests, llm, make_run, records
from screen_text import flat


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_preference_judge_stores_both_passes_and_every_field(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference")
    judged = llm(invoke, run, "sim-judge-fair", "--price", "1,2", url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    assert "The LLM judge sim-judge-fair judged 12 of 12 trials" in judged.stdout
    rows = records(run / "picks.jsonl")
    assert len(rows) == 24
    assert [r["pass"] for r in rows[:4]] == [1, 2, 1, 2]
    first, second = rows[0], rows[1]
    for field in (
        "comparison_id", "judge_model", "position_mapping", "verdict", "confidence", "reason",
        "key_differentiators", "identity_leakage", "identity_leakage_details",
        "position_consistent", "at", "raw_response", "attempts", "tokens", "cost",
    ):  # fmt: skip
        assert field in first, field
    assert first["judge_kind"] == "llm"
    assert first["judge_model"] == "sim-judge-fair"
    assert first["position_mapping"] == {"A": "left", "B": "right"}
    assert second["position_mapping"] == {"A": "right", "B": "left"}
    assert first["comparison_id"] == second["comparison_id"]
    # Both raw verdicts are stored; pass 2's pick is in the trial's own order.
    assert orjson.loads(second["raw_response"])["preference"] in ("A", "B")
    assert second["pass_pick"] == {"A": "right", "B": "left"}[second["verdict"]]
    analyzed = invoke("analyze", run)
    assert analyzed.exit_code == 0, analyzed.output
    assert "The LLM judge 'sim-judge-fair'" in analyzed.stdout or "sim-judge-fair" in (
        analyzed.stdout
    )


def test_triangle_and_pair_judges_score_like_a_person(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    tri = make_run(invoke, simulator.base_url, tmp_path / "tri", "triangle")
    assert llm(invoke, tri, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    picks = records(tri / "picks.jsonl")
    assert len(picks) == 12
    assert all(p["pick"] in (1, 2, 3) for p in picks)
    report = invoke("analyze", tri)
    assert report.exit_code in (0, 1), report.output
    assert "The LLM judge 'sim-judge-fair'" in flat(report.stdout)

    pair = make_run(invoke, simulator.base_url, tmp_path / "pair", "pair")
    assert llm(invoke, pair, "sim-judge-longer", url=simulator.base_url).exit_code == 0
    picks = records(pair / "picks.jsonl")
    assert {tuple(p["nicknames"]) for p in picks} == {("Ash", "Birch")}
    # The pair conversation holds the judge's earlier answers: the 12th request has 11.
    bodies = judge_requests(simulator)
    assert [m["role"] for m in bodies[-1]["messages"]].count("assistant") == 11
    report = invoke("analyze", pair)
    assert "the nicknames followed the models in 12 of 12 trials" in flat(report.stdout)


def test_pair_transcript_too_long_refused_with_the_count_that_fits(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "pair", "pair")
    before = len(simulator.requests)
    out = tmp_path / "picks-llm.jsonl"
    result = llm(
        invoke, run, "sim-judge-fair", "--judge-context-tokens", 3000, "--out", out,
        url=simulator.base_url,
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "--judge-context-tokens 3000" in result.stderr
    assert "only " in result.stderr
    assert not out.exists()
    assert len(simulator.requests) == before


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("[OUTPUT_A] [OUTPUT_B] [INPUT_CONTEXT] [RUBRIC]", "unknown placeholder [RUBRIC]"),
        ("[OUTPUT_A] [INPUT_CONTEXT]", "the template has no [OUTPUT_B]"),
    ],
)
def test_judge_template_placeholders_checked_before_any_call(
    invoke: Any, simulator: Simulator, tmp_path: Path, template: str, message: str
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference")
    path = tmp_path / "template.txt"
    path.write_text(template)
    before = len(simulator.requests)
    result = llm(invoke, run, "sim-judge-fair", "--judge-template", path, url=simulator.base_url)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (run / "picks.jsonl").exists()
    assert len(simulator.requests) == before


def test_judge_template_fills_spec_placeholders(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference")
    path = tmp_path / "template.txt"
    path.write_text("Judge by brevity.\n## OUTPUT A\n[OUTPUT_A]\n## OUTPUT B\n[OUTPUT_B]\n"
                    "## INPUT CONTEXT\n[INPUT_CONTEXT]\n")  # fmt: skip
    shown = llm(
        invoke, run, "sim-judge-fair", "--judge-template", path, "--show-prompt", 1,
        url=simulator.base_url,
    )  # fmt: skip
    assert shown.exit_code == 0
    assert shown.stdout.startswith("--- user ---\nJudge by brevity.\n## OUTPUT A\n")
    assert "[OUTPUT_A]" not in shown.stdout


def test_response_format_sent_then_plain_text_after_a_400_naming_it(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=4)
    assert llm(invoke, run, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    bodies = judge_requests(simulator)
    assert all(b["response_format"]["type"] == "json_schema" for b in bodies)
    assert all(b["temperature"] == 0 for b in bodies)

    simulator.reset()
    simulator.config.refuse_response_format = True
    result = llm(
        invoke, run, "sim-judge-fair", "--out", tmp_path / "plain.jsonl", url=simulator.base_url
    )
    assert result.exit_code == 0, result.output
    bodies = judge_requests(simulator)
    # The first request learns the endpoint refuses it; no later request sends it.
    assert "response_format" not in bodies[-1]
    assert sum("response_format" in b for b in bodies) <= 8  # at most the first wave in flight
    rows = records(tmp_path / "plain.jsonl")
    assert len(rows) == 8
    assert rows[0]["raw_response"].startswith("Here is my evaluation.\n\n```json")


def test_malformed_json_judge_records_failures_exits_3_and_rerun_asks_only_those(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "triangle", trials=20)
    first = llm(invoke, run, "sim-judge-malformed", url=simulator.base_url)
    assert first.exit_code == 3
    assert first.stderr.count("\n") == 1
    assert "failed and recorded as failure rows" in first.stderr
    rows = records(run / "picks.jsonl")
    failed = [r for r in rows if r.get("failed")]
    good = [r for r in rows if not r.get("failed")]
    assert failed
    assert good
    assert all(r["attempts"] == 4 and "no valid verdict after 4 answers" in r["error"]
               for r in failed)  # fmt: skip
    # Asked again with backoff: the first two answers of every comparison were not JSON.
    assert all(r["attempts"] == 3 for r in good)
    simulator.reset()
    again = llm(invoke, run, "sim-judge-malformed", url=simulator.base_url)
    assert again.exit_code == 3
    assert len(judge_requests(simulator)) == 4 * len(failed)
    assert invoke("analyze", run).exit_code in (0, 1)  # failure rows are not picks


def test_kill_9_mid_run_then_rerun_asks_only_what_is_missing(invoke: Any, tmp_path: Path) -> None:
    with running(SimulatorConfig(latency=0.1)) as sim:
        run = make_run(invoke, sim.base_url, tmp_path / "run", "preference", trials=20)
        command = [
            sys.executable, "-m", "blindtest", "judge", str(run), "--judge",
            "llm:sim-judge-fair", "--judge-url", sim.base_url, "--concurrency", "2",
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
        # Eight requests answered, every later one held: the judge cannot finish before the
        # kill, however busy the machine.
        sim.reset()
        sim.config.fail_after, sim.config.fail_with = 8, "hang"
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        picks = run / "picks.jsonl"
        while not (picks.exists() and len(picks.read_bytes().splitlines()) >= 8):
            time.sleep(0.02)
            assert process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait()
        stored = {r["trial"] for r in records(picks) if r.get("pass", 1) == 1}
        assert len(stored) == 4  # two passes each
        sim.config.fail_after = None
        sim.reset()
        again = invoke("judge", *command[4:])
        assert again.exit_code == 0, again.output
        asked = judge_requests(sim)
        assert len(asked) == 2 * (20 - len(stored))
        rows = [r for r in records(picks) if r.get("pass", 1) == 1]
        assert sorted(r["trial"] for r in rows) == list(range(1, 21))


def test_keys_appear_in_no_file(
    invoke: Any, simulator: Simulator, sim_key: str, tmp_path: Path
) -> None:
    url, run = simulator.base_url, tmp_path / "run"
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", 6, "--a", "sim-large",
        "--b", "sim-small", "--a-url", url, "--b-url", url, "--a-key-env", SIM_KEY_ENV,
        "--b-key-env", SIM_KEY_ENV, "--seed", "k",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    judged = llm(invoke, run, "sim-judge-fair", "--judge-key-env", SIM_KEY_ENV, url=url)
    assert judged.exit_code == 0, judged.output
    assert sim_key not in judged.output
    for path in run.iterdir():
        assert sim_key.encode() not in path.read_bytes(), path
    missing = llm(invoke, run, "sim-judge-fair", "--judge-key-env", "NO_SUCH_KEY_VAR", url=url)
    assert missing.exit_code == 2
    assert "NO_SUCH_KEY_VAR is not set" in missing.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "human", "--rpm", "5"], "--rpm: only for --judge llm:MODEL"),
        (["--judge", "llm:"], "--judge llm:MODEL: name the judge model"),
        (["--judge", "llm:m", "--min-confidence", "2"], "--min-confidence: expected a number"),
        (["--judge", "llm:m", "--price", "x"], "--price: expected IN,OUT"),
        (["--judge", "llm:m", "--judge-url", "ftp://x"], "must start with http:// or https://"),
        (["--judge", "robot"], "unknown judge 'robot'"),
        (["--judge", "llm:m", "--show-prompt", "99"], "--show-prompt 99: this run has trials"),
    ],
)
def test_bad_options_exit_2_one_line_nothing_written(
    invoke: Any, simulator: Simulator, tmp_path: Path, args: list[str], message: str
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=4)
    before = sorted(p.name for p in run.iterdir())
    requests = len(simulator.requests)
    result = invoke("judge", run, *args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert sorted(p.name for p in run.iterdir()) == before
    assert len(simulator.requests) == requests


def test_show_prompt_prints_spec_003_prompt_and_calls_nothing(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=4)
    before = sorted(p.name for p in run.iterdir())
    requests = len(simulator.requests)
    shown = invoke("judge", run, "--judge", "llm:gpt-x", "--show-prompt", 2)
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert text.startswith("--- user ---\nYou are an impartial output evaluator.")
    for part in ("## EVALUATION CRITERIA", "## OUTPUT A", "## OUTPUT B", "## INPUT CONTEXT",
                 "## SOURCE MATERIAL", "Do not assume that longer outputs are better.",
                 '"identity_leakage_detected": true | false', "## CONSTRAINTS"):  # fmt: skip
        assert part in text
    trial = records(run / "trials.jsonl")[1]
    assert trial["options"][0] in text
    assert trial["prompt"] in text
    assert sorted(p.name for p in run.iterdir()) == before
    assert len(simulator.requests) == requests


def test_blindtest_run_with_an_llm_judge(invoke: Any, simulator: Simulator, tmp_path: Path) -> None:
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--a-url", url, "--b-url", url, "--demo", "--protocol",
        "preference", "--trials", 6, "--judge", "llm:sim-judge-fair", "--judge-url", url,
        "--run-dir", tmp_path / "r",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "r" / "report.json").exists()
    assert "sim-judge-fair" in result.stdout


def test_killed_between_the_two_passes_rerun_asks_and_writes_only_pass_2(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=6)
    picks = run / "picks.jsonl"
    assert llm(invoke, run, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    lines = picks.read_bytes().splitlines(keepends=True)
    # As if killed after trial 3's pass 1 was appended: its pass 2 and the later trials lost.
    assert orjson.loads(lines[4])["trial"] == 3
    picks.write_bytes(b"".join(lines[:5]))
    simulator.reset()
    again = llm(invoke, run, "sim-judge-fair", url=simulator.base_url)
    assert again.exit_code == 0, again.output
    # Trial 3's pass 1 is on disk and taken as it is: its pass 2, then trials 4, 5, 6.
    assert len(judge_requests(simulator)) == 1 + 2 * 3
    rows = records(picks)
    assert [(r["trial"], r["pass"]) for r in rows] == [(t, p) for t in range(1, 7) for p in (1, 2)]
    assert invoke("analyze", run).exit_code in (0, 1)


def test_llm_picks_never_join_a_file_of_another_kind_of_judge(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=4)
    assert invoke("judge", run, "--judge", "bot:random", "--quiet").exit_code == 0
    before = (run / "picks.jsonl").read_bytes()
    requests = len(simulator.requests)
    result = llm(invoke, run, "sim-judge-fair", url=simulator.base_url)
    assert result.exit_code == 2
    assert "an LLM judge's picks never share a file with a person's or a bot's" in result.stderr
    assert (run / "picks.jsonl").read_bytes() == before
    assert len(simulator.requests) == requests


def test_pair_judge_resumed_keeps_its_earlier_answers_in_the_conversation(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "pair", "pair", trials=6)
    assert llm(invoke, run, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    picks = run / "picks.jsonl"
    picks.write_bytes(b"".join(picks.read_bytes().splitlines(keepends=True)[:3]))
    simulator.reset()
    assert llm(invoke, run, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    bodies = judge_requests(simulator)
    assert [[m["role"] for m in b["messages"]].count("assistant") for b in bodies] == [3, 4, 5]
    assert {tuple(r["nicknames"]) for r in records(picks)} == {("Ash", "Birch")}


def test_transport_errors_use_bt_generates_retry_policy(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "triangle", trials=4)
    simulator.inject("429", times=2, model="sim-judge-fair")
    simulator.inject("500", times=1, model="sim-judge-fair")
    judged = llm(invoke, run, "sim-judge-fair", "--concurrency", 1, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    rows = records(run / "picks.jsonl")
    assert sum(r["attempts"] for r in rows) == 4 + 3  # the three faults were retried
    assert "7 requests (3 retries)" in judged.stdout
    simulator.reset()
    simulator.inject("500", times=12, model="sim-judge-fair")
    again = llm(
        invoke, run, "sim-judge-fair", "--max-retries", 2, "--out", tmp_path / "x.jsonl",
        "--concurrency", 1, url=simulator.base_url,
    )  # fmt: skip
    # Every request answers 500: each comparison gives up after 1 + 2 retries, a failure row.
    assert again.exit_code == 3
    failed = [r for r in records(tmp_path / "x.jsonl") if r.get("failed")]
    assert sorted(r["trial"] for r in failed) == [1, 2, 3, 4]
    assert all(r["attempts"] == 3 and "HTTP 500" in r["error"] for r in failed)
    assert len(judge_requests(simulator)) == 12
