"""bt-verify recomputes the judge statistics of a report from the run's files: the panel's
agreement (Krippendorff's alpha with its bootstrap interval drawn from the design's seed, each
pair's Cohen's kappa), the breakdown by prompt tag (Wilson interval, exact p, Holm), and each
LLM judge's diagnostics (position split and sign test, length and markdown shares, swap
consistency). A fresh run verifies (exit 0); any one of these numbers edited in report.json
exits 1 with a line naming it.

The run is real: a preference design on tagged prompts, answered by the simulator, judged by
two simulated LLM judges through bt-judge (the position swap on) and by a person whose picks
are written here, then audited and analysed through the commands."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.rng import IndexStream
from blindtest.rundir import artifacts
from blindtest.simulator import SimulatorConfig, running
from blindtest.stats import krippendorff_alpha

from report_runs import cli, load, preference_picks, write_picks

JUDGES = ("sim-judge-fair", "sim-judge-first", "sim-judge-longer")
PEOPLE = ("alice", "bob")
PEOPLE_REPORT = "report-people.json"
TRIALS = 24


def _prompts(path: Path) -> Path:
    tags = ("code", "writing", "math")
    rows = [
        {"id": f"q{i:02d}", "prompt": f"Question {i}: explain topic {i} briefly.",
         "tags": [tags[i % 3], *(["short"] if i % 4 == 0 else [])]}
        for i in range(TRIALS)
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _person(design: Any, name: str, tie_every: int) -> list[dict[str, Any]]:
    """A person who prefers A on code and B elsewhere, with a tie every ``tie_every`` trials."""
    tags = {p["id"]: p["tags"] for p in design["prompts"]}
    outcome = {}
    for entry in design["arrangement"]:
        side = "A" if "code" in tags[entry["prompt_id"]] else "B"
        outcome[entry["trial"]] = "tie" if entry["trial"] % tie_every == 0 else side
    return preference_picks(design, outcome, judge=name)


def _picks_args(run: Path, names: tuple[str, ...]) -> list[Any]:
    return [a for name in names for a in ("--picks", run / f"picks-{name}.jsonl")]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("judged")
    run = root / "run"
    with running(SimulatorConfig()) as sim:
        url = sim.base_url
        steps: list[tuple[Any, ...]] = [
            ("design", run, "--prompts", _prompts(root / "prompts.jsonl"), "--protocol",
             "preference", "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url",
             url, "--seed", "verify-judges", "--trials", TRIALS),
            ("generate", run, "--quiet"),
            *[("judge", run, "--judge", f"llm:{j}", "--judge-url", url, "--out",
               run / f"picks-{j}.jsonl", "--quiet") for j in JUDGES],
        ]  # fmt: skip
        for step in steps:
            done = cli(*step)
            assert done.exit_code == 0, (step, done.output)
    # People are never pooled with LLM judges: their panel has a report of its own, and
    # bt-verify recomputes every report*.json of the run.
    write_picks(run / "picks-alice.jsonl", _person(load(run), "alice", 5))
    write_picks(run / "picks-bob.jsonl", _person(load(run), "bob", 3))
    assert cli("audit", run, "--quiet").exit_code == 0
    for names, out in ((JUDGES, artifacts.REPORT), (PEOPLE, PEOPLE_REPORT)):
        analyzed = cli("analyze", run, *_picks_args(run, names), "--out", run / out, "--quiet")
        assert analyzed.exit_code in (0, 1), analyzed.output  # a gate may fail; it verifies
    return run


@pytest.fixture
def run(judged: Path, tmp_path: Path) -> Path:
    """A private copy of the judged run, to tamper with."""
    return Path(shutil.copytree(judged, tmp_path / "run"))


def report_of(run: Path, name: str = artifacts.REPORT) -> dict[str, Any]:
    return dict(orjson.loads((run / name).read_bytes()))


def test_the_judged_run_holds_every_judge_statistic(judged: Path) -> None:
    machines, people = report_of(judged), report_of(judged, PEOPLE_REPORT)
    for report in (machines, people):
        assert report["agreement"]["measurable"]
        assert report["agreement"]["alpha"]["interval"] is not None
        assert {"code", "writing", "math", "short"} <= set(report["candidates"]["by_tag"])
    (pair,) = people["agreement"]["pairs"]
    assert pair["interval"] is not None
    assert pair["p_value"] is not None
    found = {j["model"]: j for j in machines["llm_judges"]["judges"]}
    assert set(found) == set(JUDGES)
    assert found["sim-judge-first"]["position"]["share_first"] is not None
    assert found["sim-judge-first"]["position"]["p_value"] is not None
    for diagnostics in found.values():
        assert diagnostics["position"]["swapped"]
        assert diagnostics["swap_consistency"]["n"] == TRIALS
    assert found["sim-judge-longer"]["p_longer"]["n"] == TRIALS
    assert found["sim-judge-longer"]["warnings"][0].startswith("length: its verdicts go with")


def test_a_fresh_judged_run_verifies(judged: Path) -> None:
    result = cli("verify", judged)
    assert result.exit_code == 0, result.stdout
    assert "checked  report.json from its inputs" in result.stdout
    assert f"checked  {PEOPLE_REPORT} from its inputs" in result.stdout
    assert result.stdout.splitlines()[-1] == "verified: everything recomputes"


def _judge(model: str) -> Any:
    """The path to one LLM judge's diagnostics, by its model."""

    def where(report: dict[str, Any]) -> tuple[Any, ...]:
        judges = report["llm_judges"]["judges"]
        return (
            "llm_judges",
            "judges",
            next(i for i, j in enumerate(judges) if j["model"] == model),
        )

    return where


FIRST, LONGER = _judge("sim-judge-first"), _judge("sim-judge-longer")
#: Where report@2 keeps the tags: each tag's pair tests (two sides: one pair, A's wins first).
TAG = ("candidates", "by_tag")
PEOPLE_EDITS: list[tuple[str, tuple[Any, ...], Any]] = [
    ("agreement alpha", ("agreement", "alpha", "statistic"), 0.99),
    ("agreement bootstrap bound", ("agreement", "alpha", "interval", "lo"), -0.5),
    ("a pair's kappa", ("agreement", "pairs", 0, "statistic"), 0.99),
    ("a pair's test of kappa = 0", ("agreement", "pairs", 0, "p_value"), 0.5),
    ("a pair's kappa interval", ("agreement", "pairs", 0, "interval", "hi"), 1.0),
    ("a tag's Holm p", (*TAG, "code", "pairs", 0, "p_holm"), 0.001),
    ("a tag's exact p", (*TAG, "writing", "pairs", 0, "p_value"), 0.001),
    ("a tag's Wilson bound", (*TAG, "math", "pairs", 0, "win_rate", "hi"), 0.9),
    ("a tag's wins", (*TAG, "short", "pairs", 0, "wins"), 99),
]
MACHINE_EDITS: list[tuple[str, Any, tuple[Any, ...], Any]] = [
    ("machines' agreement alpha", None, ("agreement", "alpha", "statistic"), 0.99),
    ("machines' tag Holm p", None, (*TAG, "math", "pairs", 0, "p_holm"), 0.001),
    ("position sign test", FIRST, ("position", "p_value"), 0.5),
    ("position split", FIRST, ("position", "second"), 3),
    ("position-inconsistent count", FIRST, ("position", "inconsistent"), 2),
    ("first's share bound", FIRST, ("position", "share_first", "lo"), 0.5),
    ("swap consistency", FIRST, ("swap_consistency", "k"), 12),
    ("swap consistency interval", LONGER, ("swap_consistency", "interval", "lo"), 0.5),
    ("length share", LONGER, ("p_longer", "k"), 12),
    ("length share's test", LONGER, ("p_longer", "p_value"), 0.5),
    ("length share's interval", LONGER, ("p_longer", "interval", "lo"), 0.5),
    ("markdown share's test", LONGER, ("p_more_markdown", "p_value"), 0.5),
    ("a judge's warning", LONGER, ("warnings", 0), "fine"),
]
EDITS = [(name, PEOPLE_REPORT, None, path, value) for name, path, value in PEOPLE_EDITS] + [
    (name, artifacts.REPORT, judge, path, value) for name, judge, path, value in MACHINE_EDITS
]


@pytest.mark.parametrize(
    ("name", "report_name", "judge", "path", "value"), EDITS, ids=[e[0] for e in EDITS]
)
def test_an_edited_judge_statistic_fails_verify_naming_the_field(
    run: Path, name: str, report_name: str, judge: Any, path: tuple[Any, ...], value: Any
) -> None:
    report = report_of(run, report_name)
    path = (*(judge(report) if judge else ()), *path)
    holder: Any = report
    for key in path[:-1]:
        holder = holder[key]
    assert holder[path[-1]] != value, name  # the edit changes something
    holder[path[-1]] = value
    (run / report_name).write_bytes(artifacts.dump_json(report))
    result = cli("verify", run)
    assert result.exit_code == 1, result.stdout
    field = f"{report_name}/" + "/".join(str(k) for k in path)
    differs = [s for s in result.stdout.splitlines() if s.startswith("DIFFERS  ")]
    assert len(differs) == 1, differs
    assert differs[0].startswith(f"DIFFERS  {field}: recorded "), differs
    assert result.stdout.splitlines()[-1] == (
        "1 difference(s): this run directory does not recompute"
    )


def test_the_agreement_bootstrap_is_drawn_from_the_design_seed_bit_for_bit(judged: Path) -> None:
    """The interval in report.json is the one the design's "agreement" stream gives, exactly:
    recomputed here from the picks files and the design alone; another stream gives another
    interval, so the seed, not chance, fixed it."""
    design = load(judged)
    report = report_of(judged, PEOPLE_REPORT)
    votes: dict[str, dict[int, str]] = {}
    for name in (f"picks-{p}.jsonl" for p in PEOPLE):
        for line in (judged / name).read_bytes().splitlines():
            pick = orjson.loads(line)
            if pick.get("pass", 1) != 1 or pick.get("failed"):
                continue
            judge = str(pick["judge"])
            # Coded by position (left, right, tie), as the analysis codes agreement.
            votes.setdefault(judge, {})[pick["trial"]] = str(pick["pick"])
    names = sorted(votes)
    trials = sorted({t for v in votes.values() for t in v})
    units = [[votes[j][t] for j in names if t in votes[j]] for t in trials]
    seeded = krippendorff_alpha(units, rng=IndexStream(design["seed"], "agreement"))
    recorded = report["agreement"]["alpha"]
    assert seeded.interval is not None
    assert recorded["statistic"] == seeded.statistic
    assert (recorded["interval"]["lo"], recorded["interval"]["hi"]) == (
        seeded.interval.lo,
        seeded.interval.hi,
    )
    assert recorded["resamples"] == seeded.resamples
    other = krippendorff_alpha(units, rng=IndexStream(design["seed"], "another stream"))
    assert other.interval is not None
    assert (other.interval.lo, other.interval.hi) != (seeded.interval.lo, seeded.interval.hi)


def test_a_report_with_another_bootstrap_draw_fails_verify(run: Path) -> None:
    """An interval from another draw (as a report made with another seed would carry) is
    caught: verify redraws from the design's seed and compares."""
    design = load(run)
    report = report_of(run, PEOPLE_REPORT)
    names = sorted(report["judges"])
    per_trial = report["per_trial"]
    votes = {(r["trial"], r["judge"]): r["pick"] for r in per_trial
             if "excluded" not in r}  # fmt: skip
    trials = sorted({t for t, _ in votes})
    units = [[votes[(t, j)] for j in names if (t, j) in votes] for t in trials]
    other = krippendorff_alpha(units, rng=IndexStream(design["seed"] + "x", "agreement"))
    assert other.interval is not None
    assert other.statistic == report["agreement"]["alpha"]["statistic"]  # same data
    report["agreement"]["alpha"]["interval"] = other.interval.to_dict()
    (run / PEOPLE_REPORT).write_bytes(artifacts.dump_json(report))
    result = cli("verify", run)
    assert result.exit_code == 1, result.stdout
    assert f"DIFFERS  {PEOPLE_REPORT}/agreement/alpha/interval/" in result.stdout
