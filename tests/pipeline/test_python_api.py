"""The stages as library functions: docs/python-api.md's example runs as written; each
function takes its command's lock and claims its outputs; the results are frozen; and
``import blindtest`` stays cheap while ``blindtest.design`` and the rest are the functions."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import blindtest
from blindtest.errors import BadInput
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"
STAGES = ("design", "generate", "judge", "audit", "analyze", "verify", "plan")


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/python-api.md has one runnable example"
    return str(blocks[0])


def test_the_documented_example_runs_and_verifies(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "BLINDTEST_DEBUG"}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "12 blinded trials in trials.jsonl" in out
    assert "12 of 12 judged into picks.jsonl" in out
    assert "can be acted on" in out  # the length bot tells the simulated models apart
    assert "verified:" in out
    assert "Pc = 0.6" in out
    assert "Pc = 0.7" in out
    assert done.stderr == ""  # a function prints nothing of its own


def test_the_readme_links_the_page() -> None:
    assert "docs/python-api.md" in (ROOT / "README.md").read_text(encoding="utf-8")


#: Each stage function's home: its stage's package (the verifier's is the pipeline's).
HOMES = {
    "design": "blindtest.designing.stage",
    "generate": "blindtest.generation.stage",
    "judge": "blindtest.judging.stage",
    "audit": "blindtest.auditing.stage",
    "analyze": "blindtest.analysis.stage",
    "verify": "blindtest.pipeline.verify",
    "plan": "blindtest.planning.stage",
}


def test_the_stage_names_are_the_functions_even_after_the_modules_load() -> None:
    import blindtest.analysis.api
    import blindtest.auditing.build
    import blindtest.designing.build
    import blindtest.generation.generate
    import blindtest.judging.sitting
    import blindtest.pipeline.recompute
    import blindtest.planning.rows

    for name in STAGES:
        function = getattr(blindtest, name)
        assert callable(function), name
        assert not isinstance(function, type(blindtest)), name
        assert function.__module__ == HOMES[name]
    assert set(STAGES) <= set(blindtest.__all__)


def test_import_blindtest_loads_no_network_statistics_or_schema_library() -> None:
    code = (
        "import sys, blindtest\n"
        "heavy = [m for m in ('aiohttp', 'scipy', 'jsonschema', 'click', 'numpy') "
        "if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def _designed(tmp_path: Path, simulator: Simulator, trials: int = 6) -> Path:
    run = tmp_path / "run"
    url = simulator.base_url
    blindtest.design(
        run, demo=True, model_a="sim-large", model_b="sim-small", a_url=url, b_url=url,
        trials=trials, seed="api",
    )  # fmt: skip
    return run


def test_a_stage_function_is_refused_while_another_process_holds_the_run(
    tmp_path: Path, simulator: Simulator
) -> None:
    run = _designed(tmp_path, simulator)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from pathlib import Path\n"
            "from blindtest.rundir import locking\n"
            "with locking.run_lock(Path(sys.argv[1]), 'the other writer'):\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.read()\n",
            str(run),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        for call in (
            lambda: blindtest.generate(run),
            lambda: blindtest.audit(run),
            lambda: blindtest.analyze(run),
            lambda: blindtest.design(run, demo=True, seed="api", trials=6),
        ):
            with pytest.raises(BadInput, match=rf"process {holder.pid} \(the other writer\)"):
                call()
        assert not (run / artifacts.RESPONSES).exists()
    finally:
        holder.communicate("")  # the holder lets go once its stdin ends


def test_the_judge_claims_its_picks_file_and_refuses_an_input(
    tmp_path: Path, simulator: Simulator
) -> None:
    run = _designed(tmp_path, simulator)
    blindtest.generate(run)
    design_bytes = (run / artifacts.DESIGN).read_bytes()
    with pytest.raises(BadInput, match=r"design\.json"):
        blindtest.judge(run, "bot:length", out=run / artifacts.DESIGN)
    assert (run / artifacts.DESIGN).read_bytes() == design_bytes
    first = blindtest.judge(run, "bot:length", out=run / "picks-length.jsonl")
    assert first.complete
    assert first.judged == first.total == 6
    assert first.failed == 0
    with pytest.raises(BadInput, match="already exists; use force=True"):  # a bot's file stands
        blindtest.judge(run, "bot:length", out=run / "picks-length.jsonl")
    again = blindtest.judge(run, "bot:length", out=run / "picks-length.jsonl", force=True)
    assert again.judged == 6


def test_results_are_frozen_and_name_what_was_written(tmp_path: Path, simulator: Simulator) -> None:
    run = _designed(tmp_path, simulator)
    generated = blindtest.generate(run)
    assert generated.mode == "live"
    assert generated.trials == 6
    assert generated.trials_path == run / artifacts.TRIALS
    assert generated.trials_path.exists()
    blindtest.judge(run, "bot:length")
    audited = blindtest.audit(run)
    assert audited.path.exists()
    assert audited.document["design_sha256"]
    analysis = blindtest.analyze(run)
    assert analysis.report_path == run / artifacts.REPORT
    assert analysis.report_path.exists()
    assert analysis.verdict == analysis.report["verdict"]
    assert analysis.exit_code in (0, 1)
    for result in (generated, audited, analysis, blindtest.verify(run)):
        field = dataclasses.fields(result)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, field, None)


def test_an_unfinished_fixed_design_analyzes_void_with_exit_code_one(
    tmp_path: Path, simulator: Simulator
) -> None:
    run = _designed(tmp_path, simulator)
    blindtest.generate(run)
    picks = run / artifacts.PICKS
    artifacts.write_jsonl(
        picks,
        [{"schema": "blindtest/picks@1", "trial": 1, "judge": "alice", "pick": 1}],
        "picks",
        force=True,
    )
    analysis = blindtest.analyze(run)
    assert analysis.verdict == "void"
    assert analysis.exit_code == 1


def test_the_old_import_paths_of_public_names_work_for_one_release_with_a_warning() -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('error')\n"
        "import blindtest\n"
        "with warnings.catch_warnings(record=True) as seen:\n"
        "    warnings.simplefilter('always')\n"
        "    from blindtest.stages.design import design\n"
        "    from blindtest.analyzing import build_report\n"
        "    from blindtest.designing import build_design\n"
        "    from blindtest.auditing import build_audit\n"
        "    from blindtest.verifying import verify_run\n"
        "    from blindtest.slots import plan_slots\n"
        "    from blindtest.generation.fetch import run_generation\n"
        "assert design is blindtest.design and build_report is blindtest.build_report\n"
        "assert build_design is blindtest.build_design and build_audit is blindtest.build_audit\n"
        "assert verify_run is blindtest.verify_run and plan_slots is blindtest.plan_slots\n"
        "assert run_generation is blindtest.run_generation\n"
        "moved = {str(w.message).split(' has moved')[0] for w in seen\n"
        "         if w.category is DeprecationWarning}\n"
        "assert moved == {'blindtest.stages', 'blindtest.stages.design', 'blindtest.analyzing',\n"
        "    'blindtest.designing.build_design', 'blindtest.auditing.build_audit',\n"
        "    'blindtest.verifying', 'blindtest.slots'}, moved\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
