"""The preference export carries what the models wrote: chosen and rejected are the original
answers by default (never cut by --truncate-match, never with identity stripping's
[redacted]), what the judge saw only with --export-text judged, and every row records per
answer the transformations the judge saw and the SHA-256 of that text."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from report_runs import preference_picks, write_picks

PROMPTS = [
    "Who are you? Then explain how to choose a database index.",
    "Who are you? Then explain retries with backoff.",
    "Explain how caching layers go stale.",
    "Explain what a message queue is for.",
    "Explain how to review a pull request.",
    "Explain why tests should be deterministic.",
]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _run(invoke: Invoke, simulator: Simulator, tmp_path: Path) -> Path:
    """A preference run whose judge saw cut answers (--truncate-match) and [redacted] names
    (identity stripping: the simulator's models name themselves when asked who they are);
    a person preferred A in every comparison, confidently."""
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("".join(f"{p}\n" for p in PROMPTS))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", prompts, "--protocol", "preference", "--trials", 6,
        "--a", "sim-large", "--b", "sim-small", "--a-url", simulator.base_url,
        "--b-url", simulator.base_url, "--seed", "export", "--truncate-match",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    design = artifacts.load_design(run).design
    picks = [
        {**p, "confidence": 0.9}
        for p in preference_picks(design, {e["trial"]: "A" for e in design["arrangement"]})
    ]
    write_picks(run / artifacts.PICKS, picks)
    return run


def _originals(run: Path) -> dict[tuple[str, str], str]:
    """(prompt id, side) -> the text the model wrote."""
    return {
        (row["prompt_id"], row["side"]): row.get("raw_text", row["text"])
        for row in _lines(run / artifacts.RESPONSES)
        if row["status"] == "ok"
    }


def test_the_export_holds_the_models_texts_and_says_what_the_judge_saw(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = _run(invoke, simulator, tmp_path)
    out = tmp_path / "prefs.jsonl"
    result = invoke("analyze", run, "--export-preferences", out, "--quiet")
    assert result.exit_code in (0, 1), result.output
    rows = _lines(out)
    design = artifacts.load_design(run).design
    trials = {t["trial"]: t for t in _lines(run / artifacts.TRIALS)}
    originals = _originals(run)
    assert len(rows) == 6
    seen: set[str] = set()
    for row, entry in zip(rows, design["arrangement"], strict=True):
        pid = entry["prompt_id"]
        assert row["chosen"] == originals[(pid, "A")]
        assert row["rejected"] == originals[(pid, "B")]
        assert row["text"] == "original"
        assert "[redacted]" not in row["chosen"] + row["rejected"]
        shown = trials[entry["trial"]]["options"]
        left = 0 if entry["left"] == "A" else 1
        for name, index in (("chosen", left), ("rejected", 1 - left)):
            saw = row["judge_saw"][name]
            assert saw["sha256"] == hashlib.sha256(shown[index].encode()).hexdigest()
            if shown[index] != row[name]:
                assert saw["transformations"], (row[name], shown[index])
            seen.update(saw["transformations"])
    # The judge saw both: the longer answer cut to the shorter, the names [redacted].
    assert {"truncate_match", "identity_strip"} <= seen
    assert any("sim-large" in row["chosen"] for row in rows)


def test_the_texts_the_judge_saw_are_exported_only_on_request(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = _run(invoke, simulator, tmp_path)
    out = tmp_path / "prefs.jsonl"
    result = invoke(
        "analyze", run, "--export-preferences", out, "--export-text", "judged", "--quiet"
    )
    assert result.exit_code in (0, 1), result.output
    trials = {t["prompt"]: t["options"] for t in _lines(run / artifacts.TRIALS)}
    rows = _lines(out)
    assert rows
    for row in rows:
        assert row["text"] == "judged"
        assert sorted([row["chosen"], row["rejected"]]) == sorted(trials[row["prompt"]])
        assert row["judge_saw"]["chosen"]["sha256"] == (
            hashlib.sha256(row["chosen"].encode()).hexdigest()
        )
