"""nothing bt-generate prints before judging tells the sides apart by anything the
responses show (lengths, tokens, costs, latencies, finish reasons, failures or retries per
side); those go to generation.json only. The pre-run estimate, made from the design, stays."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from click.testing import Result

from blindtest.simulator import Simulator

from conftest import Invoke, numbered_prompts


def design_and_generate(
    invoke: Invoke,
    simulator: Simulator,
    where: Path,
    monkeypatch: pytest.MonkeyPatch,
    a: str,
    b: str,
    protocol: str = "triangle",
) -> Result:
    """bt-design then bt-generate from ``where``, on the relative path ``run`` (so the paths
    printed are the same for both runs); the side-specific faults follow the model."""
    where.mkdir()
    monkeypatch.chdir(where)
    Path("prompts.txt").write_text("\n".join(numbered_prompts(8)) + "\n")
    url = simulator.base_url
    designed = invoke(
        "design", "run", "--prompts", "prompts.txt", "--a", a, "--b", b,
        "--a-url", url, "--b-url", url, "--seed", "swap", "--trials", 8,
        "--max-tokens", 60, "--protocol", protocol,
    )  # fmt: skip
    assert designed.exit_code == 0, designed.stderr
    # sim-large is long, cut at the token limit, refuses once and is rate-limited once; all
    # of it shows per side in generation.json and none of it may show on screen.
    simulator.inject("refusal", times=1, model="sim-large")
    simulator.inject("429", times=1, model="sim-large")
    result = invoke(
        "generate", "run", "--concurrency", 1, "--price-a", "2.5,10", "--price-b", "2.5,10"
    )
    assert result.exit_code == 0, result.stderr
    return result


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_generate_prints_the_same_when_the_two_sides_are_swapped(
    invoke: Invoke,
    simulator: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    protocol: str,
) -> None:
    first = design_and_generate(
        invoke, simulator, tmp_path / "one", monkeypatch, "sim-large", "sim-small", protocol
    )
    second = design_and_generate(
        invoke, simulator, tmp_path / "two", monkeypatch, "sim-small", "sim-large", protocol
    )
    assert first.stdout == second.stdout
    assert first.stderr == second.stderr
    # The sides really did differ, and generation.json (read after judging) says how.
    one = orjson.loads((tmp_path / "one" / "run" / "generation.json").read_bytes())["roles"]
    two = orjson.loads((tmp_path / "two" / "run" / "generation.json").read_bytes())["roles"]
    assert one["A"]["completion_tokens"] != one["B"]["completion_tokens"]
    assert one["A"]["refusals"] == 1
    assert one["A"]["retries"] == 1
    assert two["B"]["refusals"] == 1
    assert two["B"]["retries"] == 1
    assert one["A"]["truncated"] > 0
    assert one["B"]["truncated"] == 0
    # Nothing per side on screen after the estimate: no tokens, costs, times or model names.
    after_estimate = first.stderr.split("estimate for the whole run, B:")[1].split("\n", 1)[1]
    for word in (
        "token",
        "$",
        "refusal",
        "wall",
        "latency",
        "sim-large",
        "sim-small",
        " A ",
        " B ",
    ):
        assert word not in after_estimate, word
    # The pre-run estimate (from the design, before any call) stays.
    assert "estimate for the whole run, A:" in first.stderr


def test_the_summary_line_counts_both_sides_together(
    invoke: Invoke, simulator: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = design_and_generate(
        invoke, simulator, tmp_path / "one", monkeypatch, "sim-large", "sim-small"
    )
    lines = result.stderr.splitlines()
    assert lines[0] == "fetching 24 responses"
    assert lines[1].startswith("  estimate for the whole run, A: ")
    assert lines[2].startswith("  estimate for the whole run, B: ")
    assert lines[3] == (
        "fetched 24 rows (0 failed) in 25 requests; per-side figures are in "
        "generation.json, for after judging"
    )
    assert lines[4].startswith("wrote run/trials.jsonl: 8 blinded trials; next: ")
    assert len(lines) == 5


def generate_on_a_tty(run: Path) -> str:
    """bt-generate RUN with stderr on a pseudo-terminal (so the progress line is drawn)."""
    primary, secondary = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "blindtest", "generate", str(run), "--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        stdin=subprocess.DEVNULL,
    )
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    assert child.wait() == 0
    return b"".join(chunks).decode()


@pytest.mark.pty
def test_the_progress_line_counts_both_sides_together(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    drawn = []
    for name, a, b in (("one", "sim-large", "sim-small"), ("two", "sim-small", "sim-large")):
        (tmp_path / name).mkdir()
        prompts = tmp_path / name / "prompts.txt"
        prompts.write_text("\n".join(numbered_prompts(8)) + "\n")
        url = simulator.base_url
        run = tmp_path / name / "run"
        designed = invoke(
            "design", run, "--prompts", prompts, "--a", a, "--b", b, "--a-url", url,
            "--b-url", url, "--seed", "swap", "--trials", 8, "--max-tokens", 60,
        )  # fmt: skip
        assert designed.exit_code == 0, designed.stderr
        simulator.inject("429", times=1, model="sim-large")
        drawn.append(generate_on_a_tty(run))
    progress = re.compile(r"\r(\d+)/24 responses  [\d.]+/s  retries (\d)  failed 0  ETA \S+ +")
    for screen in drawn:
        segments = [s for s in screen.split("\r") if "responses  " in s]
        assert segments
        for segment in segments:
            assert progress.fullmatch("\r" + segment.split("\n")[0]), segment
    finals = [progress.findall(screen)[-1] for screen in drawn]
    assert finals[0] == finals[1] == ("24", "1")
