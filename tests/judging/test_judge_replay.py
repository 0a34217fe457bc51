"""``bt-judge --judge replay:PATH``: a judge that copies another run's picks for the same
design, end to end through bt-judge and bt-analyze; and the shape of the judge registry it was
added to as one module and one registry line."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

import blindtest
from blindtest.judging.driver import JudgeKind, judge_kind
from blindtest.model import judge_kinds as kinds
from blindtest.model.picks import load_judge_run
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of, write_picks

Invoke = Any
PACKAGE = Path(blindtest.__file__).parent


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def copy_run(run_dir: Path, name: str) -> Path:
    """The same design and trials in another directory, without its picks."""
    other = run_dir.parent / name
    other.mkdir()
    for file in (artifacts.DESIGN, "design.sha256", artifacts.TRIALS):
        if (run_dir / file).exists():
            shutil.copy2(run_dir / file, other / file)
    return other


def report(run_dir: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((run_dir / artifacts.REPORT).read_text())
    return loaded


def without_paths(found: dict[str, Any]) -> dict[str, Any]:
    """A report's numbers and words, without what names the run directory or the clock."""
    text = json.dumps(
        {k: v for k, v in found.items() if k not in ("provenance", "inputs", "reading")}
    )
    return dict(json.loads(text))


def human_picks(run_dir: Path, trials: range, judge: str = "ann") -> list[dict[str, Any]]:
    sha = load_judge_run(run_dir).design_sha256
    return [
        {
            "trial": t,
            "judge": judge,
            "pick": 1 + t % 3,
            "at": f"2026-01-01T00:00:{t:02d}+00:00",
            "judge_kind": "human",
            "design_sha256": sha,
        }
        for t in trials
    ]


# --------------------------------------------------------------------------- end to end


def test_a_bots_picks_replayed_into_a_copy_analyse_the_same(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, trials=8, name="first")
    assert invoke("judge", first, "--judge", "bot:length", "-q").exit_code == 0
    second = copy_run(first, "second")
    done = invoke("judge", second, "--judge", f"replay:{first / 'picks.jsonl'}")
    assert done.exit_code == 0, done.stderr
    assert "Replayed 8 of 8 trials from" in done.stdout
    assert picks_of(second / "picks.jsonl") == picks_of(first / "picks.jsonl")
    for run_dir in (first, second):
        assert invoke("analyze", run_dir).exit_code in (0, 1)
    assert without_paths(report(second)) == without_paths(report(first))


def test_a_persons_partial_picks_are_replayed_and_a_rerun_adds_nothing(
    tmp_path: Path, invoke: Invoke
) -> None:
    first = make_run(tmp_path, trials=6, name="first")
    source = write_picks(first / "picks.jsonl", human_picks(first, range(1, 5)))
    second = copy_run(first, "second")
    done = invoke("judge", second, "--judge", f"replay:{source}")
    assert done.exit_code == 0, done.stderr
    assert "Replayed 4 of 6 trials" in done.stdout
    copied = picks_of(second / "picks.jsonl")
    assert [(p["trial"], p["judge"], p["pick"], p["at"]) for p in copied] == [
        (p["trial"], p["judge"], p["pick"], p["at"]) for p in human_picks(first, range(1, 5))
    ]
    assert {p["judge_kind"] for p in copied} == {"human"}
    before = (second / "picks.jsonl").read_bytes()
    again = invoke("judge", second, "--judge", f"replay:{source}", "-q")
    assert again.exit_code == 0, again.stderr
    assert (second / "picks.jsonl").read_bytes() == before
    for run_dir in (first, second):
        assert invoke("analyze", run_dir).exit_code in (0, 1)
    assert without_paths(report(second)) == without_paths(report(first))


def test_a_replay_may_rename_the_judge(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, trials=3, name="first")
    source = write_picks(first / "picks.jsonl", human_picks(first, range(1, 4)))
    second = copy_run(first, "second")
    done = invoke("judge", second, "--judge", f"replay:{source}", "--judge-id", "ann-again")
    assert done.exit_code == 0, done.stderr
    assert {p["judge"] for p in picks_of(second / "picks.jsonl")} == {"ann-again"}


def test_an_llm_judges_two_passes_and_failures_are_replayed(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, "preference", trials=4, name="first")
    sha = load_judge_run(first).design_sha256
    settings = {"model": "m", "temperature": 0.0}
    rows: list[dict[str, Any]] = []
    for t in (1, 2, 4):
        for number, pick in ((1, "left"), (2, "right")):
            rows.append(
                {
                    "trial": t,
                    "judge": "m",
                    "pick": pick,
                    "pass": number,
                    "judge_kind": "llm",
                    "design_sha256": sha,
                    "judge_settings": settings,
                }
            )
    rows.insert(4, {"trial": 3, "judge": "m", "pick": "failed", "failed": True,
                    "judge_kind": "llm", "design_sha256": sha, "error": "timeout"})  # fmt: skip
    source = write_picks(first / "picks.jsonl", rows)
    second = copy_run(first, "second")
    done = invoke("judge", second, "--judge", f"replay:{source}")
    assert done.exit_code == 0, done.stderr
    copied = picks_of(second / "picks.jsonl")
    kept = [(r["trial"], r.get("pass"), r["pick"]) for r in copied]
    assert kept == [(1, 1, "left"), (1, 2, "right"), (2, 1, "left"), (2, 2, "right"),
                    (3, None, "failed"), (4, 1, "left"), (4, 2, "right")]  # fmt: skip
    assert copied[4]["error"] == "timeout"
    assert all(r["judge_kind"] == "llm" for r in copied)
    assert all(r["judge_settings"] == settings for r in copied)


# --------------------------------------------------------------------------- refused


def test_a_replay_from_another_design_is_refused_and_writes_nothing(
    tmp_path: Path, invoke: Invoke
) -> None:
    first = make_run(tmp_path, trials=3, name="first")
    other = make_run(tmp_path, trials=3, name="other", question="Which differs?")
    assert invoke("judge", first, "--judge", "bot:length", "-q").exit_code == 0
    existing = write_picks(other / "picks.jsonl", [])
    error = one_line_error(
        invoke("judge", other, "--judge", f"replay:{first / 'picks.jsonl'}", "--force")
    )
    theirs = load_judge_run(first).design_sha256[:12]
    assert f"was judged against design {theirs}, not this run's design" in error
    assert existing.read_bytes() == b"\n"


def test_a_replay_naming_a_trial_this_run_lacks_is_refused(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, trials=3, name="first")
    source = write_picks(tmp_path / "elsewhere.jsonl", human_picks(first, range(1, 5)))
    error = one_line_error(invoke("judge", first, "--judge", f"replay:{source}"))
    assert "names trial 4, which this run does not have (trials 1..3)" in error
    assert not (first / "picks.jsonl").exists()


def test_a_replay_beside_other_trials_is_refused(tmp_path: Path, invoke: Invoke) -> None:
    first = make_run(tmp_path, trials=3, name="first")
    source = write_picks(first / "picks.jsonl", human_picks(first, range(1, 4)))
    second = copy_run(first, "second")
    trials = second / artifacts.TRIALS
    trials.write_bytes(trials.read_bytes().replace(b"Answer 2:", b"Answer two:"))
    error = one_line_error(invoke("judge", second, "--judge", f"replay:{source}"))
    assert "those picks judged other texts" in error
    assert not (second / "picks.jsonl").exists()


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("", "name the picks file to copy"),
        ("missing.jsonl", "no such file"),
        ("two.jsonl", "holds picks by 2 judges ('ann', 'bob')"),
        ("empty.jsonl", "holds no picks to replay"),
    ],
)
def test_a_replay_without_one_judges_picks_is_refused(
    tmp_path: Path, invoke: Invoke, source: str, said: str
) -> None:
    run_dir = make_run(tmp_path, trials=3)
    write_picks(
        tmp_path / "two.jsonl",
        human_picks(run_dir, range(1, 3)) + human_picks(run_dir, range(1, 3), "bob"),
    )
    write_picks(tmp_path / "empty.jsonl", [])
    path = tmp_path / source if source else ""
    error = one_line_error(invoke("judge", run_dir, "--judge", f"replay:{path}"))
    assert said in error
    assert not (run_dir / "picks.jsonl").exists()


# --------------------------------------------------------------------------- the shape


EXAMPLES = {"bot": "bot:length", "llm": "llm:gpt-4o"}


def test_every_registered_kind_is_made_by_the_module_the_registry_names(
    tmp_path: Path,
) -> None:
    run_dir = make_run(tmp_path, trials=2)
    source = write_picks(tmp_path / "one.jsonl", human_picks(run_dir, range(1, 3)))
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text('[{"pairId": "a--b--p001", "judge": "al", "choice": "left"}]')
    examples = {**EXAMPLES, "replay": f"replay:{source}", "verdicts": f"verdicts:{verdicts}"}
    for kind in kinds.REGISTRY:
        if kind.module is None:
            assert kind.offered == ()
            continue
        path = PACKAGE.parent / (kind.module.replace(".", "/") + ".py")
        assert path.is_file(), kind
        made = judge_kind(examples.get(kind.name, kind.name))
        assert isinstance(made, JudgeKind)
        assert made.name == examples.get(kind.name, kind.name)
        assert kind.records_as is None or made.records_as == kind.records_as
        assert made.records_as in kinds.PICK_KINDS
    assert judge_kind(f"replay:{source}").records_as == "human"


def test_one_pick_kind_per_judge_kind_name_says_the_contract() -> None:
    assert set(kinds.PICK_KINDS) == {"human", "bot", "llm", "external"}
    assert kinds.PICK_KINDS["llm"].passes == 2
    assert all(k.pool for k in kinds.PICK_KINDS.values())
    schema = json.loads((PACKAGE / "rundir" / "schemas" / "picks.schema.json").read_text())
    assert set(kinds.PICK_KINDS) <= set(json.dumps(schema).split('"'))


def _values(path: Path) -> list[tuple[str, int]]:
    """String constants in a module's code (docstrings left out), with their lines."""
    tree = ast.parse(path.read_text())
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        (node.value, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
    ]


def test_the_replay_kind_is_one_module_and_one_registry_line() -> None:
    # Outside its own module, the kind's name is a value on one line only: its registry entry.
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "judging" / "replay.py":
            continue
        for value, line in _values(path):
            if value == "replay" or value.startswith("replay:"):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    entry = next(k for k in kinds.REGISTRY if k.name == "replay")
    assert entry.module == "blindtest.judging.replay"
    assert len(found) == 1, found
    assert found[0].startswith("blindtest/model/judge_kinds.py:"), found


def test_the_cli_lists_the_kinds_from_the_registry(tmp_path: Path, invoke: Invoke) -> None:
    shown = " ".join(invoke("judge", "--help").output.split())
    for kind in kinds.REGISTRY:
        if kind.module is not None:
            label = f"{kind.name}:{kind.arg}" if kind.arg else kind.name
            assert f"{label} ({kind.says}" in shown, label
    run_dir = make_run(tmp_path, trials=2)
    error = one_line_error(invoke("judge", run_dir, "--judge", "robot"))
    assert f"unknown judge 'robot'; use one of {', '.join(kinds.JUDGE_KINDS)}" in error
    assert "replay:PATH" in error
    assert "llm:MODEL" in error
