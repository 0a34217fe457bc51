"""docs/ci.md's release gate, run as CI runs it: the commands of its marked block against a
copy of the committed run directory examples/gate/run, with no network; the JUnit file read
by a real JUnit consumer."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import orjson
from junitparser import JUnitXml

from blindtest.simulator import Simulator

from conftest import Invoke

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "gate" / "run"
MARKER = "<!-- ci-gate: the suite runs the commands of this block against examples/gate -->"


def ci_commands() -> list[list[str]]:
    text = (ROOT / "docs" / "ci.md").read_text()
    after = text.split(MARKER, 1)[1]
    block = re.search(r"```sh\n(.*?)```", after, re.DOTALL)
    assert block is not None, "docs/ci.md: no command block after the marker"
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def test_the_example_is_a_release_gate_made_before_any_answer() -> None:
    design = orjson.loads((EXAMPLE / "design.json").read_bytes())
    assert design["decision"]["rule"] == "noninferior"
    assert design["decision"]["sensitivity"]["comparisons"] == 10
    picks = [orjson.loads(line) for line in (EXAMPLE / "picks.jsonl").read_bytes().splitlines()]
    assert {p["judge_kind"] for p in picks} == {"llm"}
    assert {p.get("pass") for p in picks} == {1, 2}  # both passes of the swap, one comparison


def test_docs_ci_commands_pass_the_gate_on_the_committed_run(
    invoke: Invoke, tmp_path: Path
) -> None:
    work = tmp_path / "examples" / "gate" / "run"
    shutil.copytree(EXAMPLE, work)
    before = (work / "report.json").read_bytes()
    commands = ci_commands()
    assert [c[0] for c in commands] == ["bt-verify", "bt-analyze"]
    for words in commands:
        paths = {"examples/gate/run": str(work), "decision.xml": str(tmp_path / "decision.xml")}
        args = [paths.get(w, w) for w in words]
        result = invoke(args[0].removeprefix("bt-"), *args[1:])
        assert result.exit_code == 0, (words, result.stdout[-2000:], result.stderr)
    xml = JUnitXml.fromfile(str(tmp_path / "decision.xml"))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 1
    assert cases[0].is_passed
    assert (work / "report.json").read_bytes() == before  # the same inputs, the same report
    decision = orjson.loads(before)["decision"]
    assert decision["decisions"][0]["comparisons"] == 30
    assert decision["sensitivity"]["passed"] is True


def test_blindtest_run_passes_the_decisions_exit_code_through(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    url = simulator.base_url
    prompts = tmp_path / "p.txt"
    prompts.write_text("\n".join(f"How should one approach topic {i}?" for i in range(40)) + "\n")
    result = invoke(
        "run", "sim-large", "sim-small", "--a-url", url, "--b-url", url, "--prompts", prompts,
        "--protocol", "preference", "--trials", "20", "--seed", "gate", "--run-dir",
        tmp_path / "run", "--decide", "noninferior:0.05", "--sensitivity", "6",
        "--judge", "llm:sim-judge-longer", "--judge-url", url,
    )  # fmt: skip
    assert result.exit_code == 4, result.stderr[-2000:]  # the cheaper, shorter side loses
    assert "exit 4: the opposite is shown" in result.stdout
    assert invoke("verify", tmp_path / "run").exit_code == 0
