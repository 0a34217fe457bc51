"""A judge's settings are part of its picks: every pick a machine judge writes records them
(``judge_settings`` and their hash), resuming it into the same file with other settings is
refused naming each one, and a default judge id never starts a second judge unawares in a
file that holds another judge's picks. Through the CLI, against the simulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.picks import settings_sha256
from blindtest.simulator import Simulator

from endpoint_fixtures import SIM_KEY_ENV
from judge_runs import make_run as make_offline_run
from judge_runs import write_picks

TRIALS = 6


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def make_run(invoke: Any, url: str, run: Path, protocol: str = "preference") -> Path:
    made = invoke(
        "design", run, "--demo", "--protocol", protocol, "--trials", TRIALS,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "s5",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def rows(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def llm(
    invoke: Any, run: Path, out: Path, *extra: Any, url: str, model: str = "sim-judge-fair"
) -> Any:
    return invoke("judge", run, "--judge", f"llm:{model}", "--judge-url", url, "--out", out, *extra)


def interrupted(path: Path, keep: int) -> bytes:
    """The picks file as a kill after ``keep`` lines would leave it."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:keep]))
    return path.read_bytes()


def test_every_llm_pick_records_the_judges_settings_and_their_hash_never_a_key(
    invoke: Any, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    sim_key = "simkey-settings-0123456789abcdef"
    monkeypatch.setenv(SIM_KEY_ENV, sim_key)
    out = run / "picks-j.jsonl"
    judged = llm(
        invoke, run, out, "--judge-temperature", "1.0", "--judge-key-env", SIM_KEY_ENV,
        url=f"{simulator.base_url}/?key={sim_key}",  # a key in the query is never written
    )  # fmt: skip
    assert judged.exit_code == 0, judged.output
    records = rows(out)
    assert len(records) == 2 * TRIALS  # both passes of each comparison
    settings = records[0]["judge_settings"]
    assert set(settings) == {
        "model", "url", "temperature", "template_sha256", "min_confidence", "swap",
        "inconsistent",
    }  # fmt: skip
    assert settings["model"] == "sim-judge-fair"
    assert settings["url"] == simulator.base_url  # no query; the trailing slash is no setting
    assert settings["temperature"] == 1.0
    assert settings["swap"] is True
    assert settings["min_confidence"] == 0.7
    assert len(settings["template_sha256"]) == 64
    assert all(r["judge_settings"] == settings for r in records)
    assert {r["judge_settings_sha256"] for r in records} == {settings_sha256(settings)}
    text = out.read_text()
    assert sim_key not in text
    assert SIM_KEY_ENV not in text  # not even the variable's name: it changes no verdict
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output
    assert "checked  picks-j.jsonl judge settings against their hash" in verified.stdout


def test_resuming_an_llm_judge_with_another_temperature_is_refused_naming_it(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    first = llm(invoke, run, out, "--judge-temperature", "1.0", url=simulator.base_url)
    assert first.exit_code == 0, first.output
    before = interrupted(out, 6)  # three comparisons of six, both passes
    asked = len(simulator.requests)

    again = llm(invoke, run, out, url=simulator.base_url)  # the default, temperature 0
    assert again.exit_code == 2
    assert again.stderr == (
        f"blindtest: error: {out} holds picks by judge 'sim-judge-fair' made with other "
        "settings (temperature 1.0 -> 0.0); one judge's picks are made with one set of "
        "settings: resume with the earlier settings (--judge-temperature), or write these "
        "picks to a new file with --out FILE\n"
    )
    assert out.read_bytes() == before
    assert len(simulator.requests) == asked  # refused before any call

    # Every setting that differs is named, old -> new.
    others = llm(
        invoke, run, out, "--judge-temperature", "1.0", "--no-swap", "--min-confidence", "0.5",
        url=simulator.base_url,
    )  # fmt: skip
    assert others.exit_code == 2
    assert "(min_confidence 0.7 -> 0.5, swap true -> false)" in others.stderr
    assert "(--min-confidence, --swap/--no-swap)" in others.stderr

    # The same settings resume; other settings go to a new file.
    resumed = llm(invoke, run, out, "--judge-temperature", "1.0", url=simulator.base_url)
    assert resumed.exit_code == 0, resumed.output
    assert len(rows(out)) == 2 * TRIALS
    assert {r["judge_settings"]["temperature"] for r in rows(out)} == {1.0}
    elsewhere = llm(invoke, run, run / "picks-cold.jsonl", url=simulator.base_url)
    assert elsewhere.exit_code == 0, elsewhere.output
    assert {r["judge_settings"]["temperature"] for r in rows(run / "picks-cold.jsonl")} == {0.0}


def test_resuming_with_another_judge_template_is_refused(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, url=simulator.base_url).exit_code == 0
    before = interrupted(out, 4)
    template = tmp_path / "template.txt"
    template.write_text("Judge.\n[INPUT_CONTEXT]\nA: [OUTPUT_A]\nB: [OUTPUT_B]\n")
    again = llm(invoke, run, out, "--judge-template", template, url=simulator.base_url)
    assert again.exit_code == 2
    assert "made with other settings (template_sha256 " in again.stderr
    assert "(--judge-template)" in again.stderr
    assert out.read_bytes() == before


def test_a_batch_export_with_other_settings_is_refused_before_writing(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, url=simulator.base_url).exit_code == 0
    interrupted(out, 4)
    requests = tmp_path / "requests.jsonl"
    exported = llm(
        invoke, run, out, "--judge-temperature", "0.5", "--batch-export", requests,
        url=simulator.base_url,
    )  # fmt: skip
    assert exported.exit_code == 2
    assert "(temperature 0.0 -> 0.5)" in exported.stderr
    assert not requests.exists()


def test_an_llm_judge_of_another_model_without_judge_id_is_refused_in_a_file_of_another(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, url=simulator.base_url).exit_code == 0
    before = interrupted(out, 4)
    other = llm(invoke, run, out, url=simulator.base_url, model="sim-judge-longer")
    assert other.exit_code == 2
    assert other.stderr == (
        f"blindtest: error: {out} holds picks by 'sim-judge-fair', none by 'sim-judge-longer' "
        "(the default for --judge llm:sim-judge-longer, as no --judge-id was given): pass "
        "--judge-id with one of those names to continue that judge, or --judge-id "
        "sim-judge-longer to add a judge to this file, or --out FILE for a file of its own\n"
    )
    assert out.read_bytes() == before
    # Continuing the earlier judge under the other model is a change of setting.
    continued = llm(
        invoke, run, out, "--judge-id", "sim-judge-fair", url=simulator.base_url,
        model="sim-judge-longer",
    )  # fmt: skip
    assert continued.exit_code == 2
    assert '(model "sim-judge-fair" -> "sim-judge-longer")' in continued.stderr
    # Named, it is a second judge in the file.
    added = llm(
        invoke, run, out, "--judge-id", "sim-judge-longer", url=simulator.base_url,
        model="sim-judge-longer",
    )  # fmt: skip
    assert added.exit_code == 0, added.output


def test_picks_files_from_before_settings_were_recorded_still_resume(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, "--judge-temperature", "1", url=simulator.base_url).exit_code == 0
    old = [
        {k: v for k, v in r.items() if not k.startswith("judge_settings")} for r in rows(out)[:4]
    ]
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in old))
    resumed = llm(invoke, run, out, url=simulator.base_url)
    assert resumed.exit_code == 0, resumed.output
    assert len(rows(out)) == 2 * TRIALS


def test_a_file_where_one_judge_changes_settings_is_refused_by_check_and_verify(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, url=simulator.base_url).exit_code == 0
    records = rows(out)
    for record in records[4:]:  # as an older bt-judge resumed at another temperature wrote it
        record["judge_settings"] = {**record["judge_settings"], "temperature": 1.0}
        record["judge_settings_sha256"] = settings_sha256(record["judge_settings"])
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    checked = invoke("judge", run, "--check", out)
    assert checked.exit_code == 2
    assert checked.stderr == (
        "blindtest: error: picks-j.jsonl:5: judge 'sim-judge-fair' changed its settings since "
        "line 1 (temperature 0.0 -> 1.0); one judge's picks are made with one set of "
        "settings: give the others a file of their own\n"
    )
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "picks-j.jsonl:5/judge_settings (sim-judge-fair)" in verified.stdout


def test_failure_rows_made_with_other_settings_block_no_resume_and_verify(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "triangle")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, "--judge-temperature", "1", url=simulator.base_url).exit_code == 0
    records = rows(out)
    assert {r["judge_settings"]["temperature"] for r in records} == {1.0}
    failed = {**records[0], "pick": "failed", "failed": True, "error": "no valid verdict"}
    for name in ("confidence", "reason", "verdict", "key_differentiators", "identity_leakage"):
        failed.pop(name, None)
    # Only failure rows at temperature 1: a rerun at 0 mixes no verdicts.
    out.write_bytes(orjson.dumps(failed) + b"\n")
    resumed = llm(invoke, run, out, url=simulator.base_url)
    assert resumed.exit_code == 0, resumed.output
    assert [r["judge_settings"]["temperature"] for r in rows(out)] == [1.0] + [0.0] * TRIALS
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output


def test_verify_finds_settings_whose_hash_does_not_recompute(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "triangle")
    out = run / "picks-j.jsonl"
    assert llm(invoke, run, out, url=simulator.base_url).exit_code == 0
    records = rows(out)
    assert "swap" not in records[0]["judge_settings"]  # a triangle has no swap to set
    records[2]["judge_settings_sha256"] = "0" * 64
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "picks-j.jsonl:3/judge_settings_sha256" in verified.stdout


def test_bot_picks_record_the_bots_settings(invoke: Any, tmp_path: Path) -> None:
    run = make_offline_run(tmp_path, "triangle", trials=4)
    out = run / "picks-dup.jsonl"
    judged = invoke("judge", run, "--judge", "bot:duplicate", "--out", out)
    assert judged.exit_code == 0, judged.output
    settings = {orjson.dumps(r["judge_settings"]) for r in rows(out)}
    assert settings == {b'{"bot":"duplicate","duplicate_threshold":0.9}'}


# --------------------------------------------------------------------------- people


def human_picks(path: Path, judge: str, trials: range) -> Path:
    return write_picks(
        path, [{"trial": t, "judge": judge, "pick": 1, "judge_kind": "human"} for t in trials]
    )


def test_a_person_without_judge_id_is_refused_in_a_file_holding_another_persons_picks(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "bob")
    monkeypatch.setenv("LOGNAME", "bob")
    run = make_offline_run(tmp_path, "triangle", trials=4)
    picks = human_picks(run / "picks.jsonl", "alice", range(1, 3))
    before = picks.read_bytes()
    result = invoke("judge", run, input="1\n1\n")
    assert result.exit_code == 2
    assert result.stderr == (
        f"blindtest: error: {picks} holds picks by 'alice', none by 'bob' (your user name, as "
        "no --judge-id was given): pass --judge-id with one of those names to continue that "
        "judge, or --judge-id bob to add a judge to this file, or --out FILE for a file of "
        "its own\n"
    )
    assert picks.read_bytes() == before

    continued = invoke("judge", run, "--judge-id", "alice", input="1\n1\n")
    assert continued.exit_code == 0, continued.output
    assert {r["judge"] for r in rows(picks)} == {"alice"}
    assert len(rows(picks)) == 4


def test_a_person_without_judge_id_continues_their_own_picks_beside_others(
    invoke: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USER", "bob")
    monkeypatch.setenv("LOGNAME", "bob")
    run = make_offline_run(tmp_path, "triangle", trials=4)
    picks = write_picks(
        run / "picks.jsonl",
        [
            *({"trial": t, "judge": "alice", "pick": 1, "judge_kind": "human"} for t in (1, 2)),
            {"trial": 1, "judge": "bob", "pick": 2, "judge_kind": "human"},
        ],
    )
    result = invoke("judge", run, input="1\n1\n1\n")
    assert result.exit_code == 0, result.output
    assert [r["trial"] for r in rows(picks) if r["judge"] == "bob"] == [1, 2, 3, 4]
    assert "judge_settings" not in rows(picks)[-1]  # a person has no settings to record
