"""``bt-judge --judge verdicts:PATH``: blind-panel verdicts (a JSON array of ``{pairId, judge,
choice}``) imported as picks for a design with candidates, each verdict on the comparison its
pairId names, checked like any picks file; anything that does not fit is refused in one line
before anything is written.

Designs with candidates are built here by rewriting a two-sided preference design to the
shape the several-candidate contract gives design.json (``candidates``, ``pairing``, an
arrangement naming both candidates, from ``blindtest.model.pairing.schedule``), and the import is
driven through the same sitting ``bt-judge`` uses (``blindtest.judging.sitting.sit``); bt-judge
itself reads such a design once the design schema accepts it, so end to end here are the
refusals it gives before a design is read, and for a two-sided design."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import Result

from blindtest.errors import BadInput
from blindtest.judging import sitting
from blindtest.judging.driver import judge_kind
from blindtest.judging.verdicts import pair_ids
from blindtest.model import judge_kinds as kinds
from blindtest.model.pairing import PAIRING_VERSION, schedule
from blindtest.model.picks import JudgeRun, Trial, load_judge_run, read_picks, view_of
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of

Invoke = Any
ITEMS = ("q1.md", "q2.md", "a--b.md", "q4.md")


def candidate_run(
    tmp_path: Path, names: Sequence[str], mode: str, *, trials: int | None = None
) -> JudgeRun:
    """A preference design rewritten to the several-candidate shape: the candidates, the
    pairing, and the arrangement ``pairing.schedule`` gives (items named as --from-dirs names
    prompts: by file name), with its blinded trials (neutral texts)."""
    base = load_judge_run(make_run(tmp_path, "preference", trials=len(ITEMS)))
    design: dict[str, Any] = copy.deepcopy(dict(base.design))
    for prompt, item in zip(design["prompts"], ITEMS, strict=True):
        prompt["id"] = item
    comparisons = schedule(names, len(ITEMS), mode, design["seed"], trials=trials)
    design["candidates"] = list(names)
    design["pairing"] = {"version": PAIRING_VERSION, "mode": mode}
    design["models"] = {name: {"model": name, "dir": f"/outputs/{name}"} for name in names}
    design["arrangement"] = [
        {"trial": n, "prompt_id": ITEMS[c.prompt], "left": c.left, "right": c.right}
        for n, c in enumerate(comparisons, start=1)
    ]
    design["trials"] = len(comparisons)
    sha = hashlib.sha256(orjson.dumps(design)).hexdigest()
    shown = tuple(
        Trial(n, f"item {ITEMS[c.prompt]}", (f"answer {n}.1", f"answer {n}.2"))
        for n, c in enumerate(comparisons, start=1)
    )
    return JudgeRun(base.run_dir, design, sha, view_of(design, list(shown), sha))  # type: ignore[arg-type]


def arrangement(run: JudgeRun) -> list[dict[str, Any]]:
    """The arrangement entries, which name both candidates in a design with candidates."""
    entries: list[dict[str, Any]] = list(run.design["arrangement"])  # type: ignore[arg-type]
    return entries


def entry_of(run: JudgeRun, trial: int) -> dict[str, Any]:
    return arrangement(run)[trial - 1]


def trial_of(run: JudgeRun, x: str, y: str, item: str) -> int:
    (found,) = [
        e["trial"]
        for e in arrangement(run)
        if {e["left"], e["right"]} == {x, y} and e["prompt_id"] == item
    ]
    return int(found)


def write_verdicts(path: Path, verdicts: object) -> Path:
    path.write_text(json.dumps(verdicts), encoding="utf-8")
    return path


def sit(run: JudgeRun, value: str, out: Path, judge_id: str | None = None) -> str:
    """One bt-judge sitting of ``--judge value`` (with ``--judge-id``, else the kind's
    default); the closing line."""
    kind = judge_kind(value)
    name = judge_id or kind.default_id
    assert name is not None
    judge, ended = sitting.sit(run, kind, name, out, False, "bt-judge RUN", {})
    return judge.closing(ended, out, "bt-analyze RUN")


def refused(run: JudgeRun, value: str, out: Path, judge_id: str | None = None) -> str:
    with pytest.raises(BadInput) as caught:
        sit(run, value, out, judge_id)
    message = str(caught.value)
    assert "\n" not in message
    assert not out.exists(), "nothing is written when verdicts are refused"
    return message


# --------------------------------------------------------------------------- importing


def test_reference_verdicts_become_picks_on_the_comparisons_they_name(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, ["ref", "modelA", "modelB"], "reference:ref")
    a_q1 = trial_of(run, "modelA", "ref", "q1.md")
    b_odd = trial_of(run, "modelB", "ref", "a--b.md")
    path = write_verdicts(
        tmp_path / "verdicts.json",
        [
            {"pairId": "modelA--q1.md", "judge": "alice", "choice": "left"},
            {"pairId": "modelA--q1.md", "judge": "bob", "choice": "right"},
            {"pairId": "modelB--a--b.md", "judge": "alice", "choice": "right"},
        ],
    )
    out = tmp_path / "picks.jsonl"
    closing = sit(run, f"verdicts:{path}", out, "alice")
    assert "Imported 2 verdicts by alice" in closing
    assert "2 of 8 comparisons answered by alice" in closing
    sit(run, f"verdicts:{path}", out, "bob")  # the next judge, into the same file
    records = picks_of(out)
    assert [(r["judge"], r["trial"], r["pick"]) for r in records] == [
        ("alice", min(a_q1, b_odd), "left" if a_q1 < b_odd else "right"),
        ("alice", max(a_q1, b_odd), "right" if a_q1 < b_odd else "left"),
        ("bob", a_q1, "right"),
    ]
    assert {r["judge_kind"] for r in records} == {"external"}
    assert {r["design_sha256"] for r in records} == {run.design_sha256}
    for record in records:  # the picks schema, and the picks contract against the design
        artifacts.validate(record, "picks", "picks.jsonl")
        assert "modelA" not in json.dumps(record)  # a pick never names a candidate
    checked = read_picks(out, run.view)
    assert checked.judges == ("alice", "bob")


def test_left_and_right_are_the_comparison_as_trials_jsonl_shows_it(tmp_path: Path) -> None:
    # The pairId names the candidate first and the reference second, but "left" is option 1
    # of the trial: whichever candidate the arrangement put there.
    run = candidate_run(tmp_path, ["ref", "modelA", "modelB"], "reference:ref")
    on_right = [e for e in arrangement(run) if e["left"] == "ref"]
    assert on_right, "the schedule puts the reference on the left sometimes"
    entry = on_right[0]
    pair_id = f"{entry['right']}--{entry['prompt_id']}"
    path = write_verdicts(
        tmp_path / "v.json", [{"pairId": pair_id, "judge": "cy", "choice": "left"}]
    )
    sit(run, f"verdicts:{path}", tmp_path / "p.jsonl")
    (record,) = picks_of(tmp_path / "p.jsonl")
    assert (record["trial"], record["pick"]) == (entry["trial"], "left")
    assert entry_of(run, record["trial"])["left"] == "ref"  # the reference was preferred


def test_all_pairs_verdicts_name_both_candidates_in_either_order(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, ["alpha", "beta", "gamma"], "all")
    path = write_verdicts(
        tmp_path / "v.json",
        [
            {"pairId": "alpha--beta--q2.md", "judge": "dee", "choice": "left"},
            {"pairId": "gamma--alpha--q2.md", "judge": "dee", "choice": "right"},
            {"pairId": "beta--gamma--a--b.md", "judge": "dee", "choice": "left"},
        ],
    )
    sit(run, f"verdicts:{path}", tmp_path / "p.jsonl")  # one judge: the default id
    found = {(r["trial"], r["pick"]) for r in picks_of(tmp_path / "p.jsonl")}
    assert found == {
        (trial_of(run, "alpha", "beta", "q2.md"), "left"),
        (trial_of(run, "alpha", "gamma", "q2.md"), "right"),
        (trial_of(run, "beta", "gamma", "a--b.md"), "left"),
    }
    assert {r["judge"] for r in picks_of(tmp_path / "p.jsonl")} == {"dee"}


@pytest.mark.parametrize("mode", ["all", "reference:ref", "sample:2"])
def test_every_trial_has_a_pair_id_that_names_it_back(tmp_path: Path, mode: str) -> None:
    run = candidate_run(tmp_path, ["ref", "m1", "m2", "m3"], mode)
    ids = pair_ids(run.design)
    assert sorted(ids) == list(range(1, run.view.total + 1))
    assert len(set(ids.values())) == len(ids)
    path = write_verdicts(
        tmp_path / "v.json",
        [{"pairId": pid, "judge": "eve", "choice": "right"} for pid in ids.values()],
    )
    sit(run, f"verdicts:{path}", tmp_path / "p.jsonl")
    records = picks_of(tmp_path / "p.jsonl")
    assert sorted(r["trial"] for r in records) == sorted(ids)
    if mode.startswith("reference"):
        assert all(pid.count("--") in (1, 2) and "ref" not in pid for pid in ids.values())


def test_an_import_is_synced_in_groups_not_pick_by_pick(tmp_path: Path) -> None:
    # The verdicts file is read again by a rerun, so a pick need not be fsynced as it is
    # made (a person's must): picks are synced in groups and at the end, as a model's.
    path = write_verdicts(
        tmp_path / "v.json", [{"pairId": "modelA--q4.md", "judge": "fay", "choice": "left"}]
    )
    kind = judge_kind(f"verdicts:{path}")
    assert (kind.sync_each_pick, kind.sync_grouped) == (False, True)
    assert judge_kind("human").sync_each_pick


def test_a_rerun_imports_nothing_twice(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, ["ref", "modelA"], "reference:ref")
    path = write_verdicts(
        tmp_path / "v.json", [{"pairId": "modelA--q4.md", "judge": "fay", "choice": "left"}]
    )
    out = tmp_path / "p.jsonl"
    sit(run, f"verdicts:{path}", out)
    closing = sit(run, f"verdicts:{path}", out)
    assert "Imported 0 verdicts" in closing
    assert len(picks_of(out)) == 1


# --------------------------------------------------------------------------- refusals


def test_a_file_of_several_judges_needs_the_judge_named(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, ["ref", "modelA"], "reference:ref")
    path = write_verdicts(
        tmp_path / "v.json",
        [
            {"pairId": "modelA--q1.md", "judge": "alice", "choice": "left"},
            {"pairId": "modelA--q1.md", "judge": "bob", "choice": "left"},
        ],
    )
    assert judge_kind(f"verdicts:{path}").default_id is None
    message = refused(run, f"verdicts:{path}", tmp_path / "p.jsonl", "carol")
    assert "holds no verdicts by 'carol'" in message
    assert "'alice', 'bob'" in message
    assert "judge_id=NAME" in message  # the parameter; bt-judge says --judge-id NAME


BAD_FILES: list[tuple[object, str]] = [
    ({"pairId": "modelA--q1.md"}, "holds a JSON dict, not an array"),
    ([], "holds no verdicts"),
    (["modelA--q1.md"], "entry 1 is not an object"),
    ([{"pairId": "modelA--q1.md", "judge": "al"}], "entry 1 lacks 'choice'"),
    (
        [{"pairId": "modelA--q1.md", "judge": "al", "choice": "left", "why": "x"}],
        "entry 1 has a field 'why'",
    ),
    ([{"pairId": 3, "judge": "al", "choice": "left"}], "pairId must be text, not 3"),
    ([{"pairId": "modelA--q1.md", "judge": "al", "choice": "tie"}], "choice 'tie' is not left"),
    ([{"pairId": "modelA--q1.md", "judge": "al", "choice": "A"}], "choice 'A' is not left"),
    ([{"pairId": "modelA--q1.md", "judge": "a\nl", "choice": "left"}], "control character"),
]


@pytest.mark.parametrize(("content", "words"), BAD_FILES)
def test_a_malformed_verdicts_file_is_refused_in_one_line(
    tmp_path: Path, content: object, words: str
) -> None:
    path = write_verdicts(tmp_path / "v.json", content)
    with pytest.raises(BadInput) as caught:
        judge_kind(f"verdicts:{path}")
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_file_that_is_not_json_or_absent_is_refused(tmp_path: Path) -> None:
    (tmp_path / "v.json").write_text("[{", encoding="utf-8")
    with pytest.raises(BadInput, match="is not JSON"):
        judge_kind(f"verdicts:{tmp_path / 'v.json'}")
    with pytest.raises(BadInput, match="cannot read"):
        judge_kind(f"verdicts:{tmp_path / 'absent.json'}")
    with pytest.raises(BadInput, match="name the verdicts file"):
        judge_kind("verdicts:")


@pytest.mark.parametrize(
    ("mode", "verdict", "words"),
    [
        ("reference:ref", "modelZ--q1.md", "names no candidates and item of this design"),
        ("reference:ref", "modelA--q9.md", "names no candidates and item of this design"),
        ("reference:ref", "ref--q1.md", "names no candidates and item"),  # ref against itself
        ("reference:ref", "modelA--modelB--q1.md", "does not compare modelA and modelB"),
        ("all", "modelA--q1.md", "(X--Y--ITEM; candidates ref, modelA, modelB)"),
        ("sample:1", None, "does not compare"),
    ],
)
def test_a_pair_id_this_design_does_not_have_is_refused(
    tmp_path: Path, mode: str, verdict: str | None, words: str
) -> None:
    run = candidate_run(tmp_path, ["ref", "modelA", "modelB"], mode)
    if verdict is None:  # a pair that sample:1 never shows on some item
        shown = {(frozenset((e["left"], e["right"])), e["prompt_id"]) for e in arrangement(run)}
        pairs = [("ref", "modelA"), ("ref", "modelB"), ("modelA", "modelB")]
        missing = [
            (x, y, i) for x, y in pairs for i in ITEMS if (frozenset((x, y)), i) not in shown
        ]
        x, y, item = missing[0]
        verdict = f"{x}--{y}--{item}"
    path = write_verdicts(
        tmp_path / "v.json", [{"pairId": verdict, "judge": "al", "choice": "left"}]
    )
    message = refused(run, f"verdicts:{path}", tmp_path / "p.jsonl")
    assert words in message
    assert "entry 1" in message


def test_a_judge_who_answers_a_comparison_twice_is_refused(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, ["alpha", "beta"], "all")
    twice = [
        {"pairId": "alpha--beta--q1.md", "judge": "al", "choice": "left"},
        {"pairId": "alpha--beta--q2.md", "judge": "al", "choice": "left"},
        {"pairId": "beta--alpha--q1.md", "judge": "al", "choice": "right"},  # the same one
    ]
    path = write_verdicts(tmp_path / "v.json", twice)
    message = refused(run, f"verdicts:{path}", tmp_path / "p.jsonl")
    assert "entry 3: judge 'al' answers comparison 'beta--alpha--q1.md' a second time" in message
    assert "first at entry 1 (as 'alpha--beta--q1.md')" in message
    # two judges on one comparison is a panel, not a repeat
    write_verdicts(path, [{**twice[0], "judge": "bo"}, twice[0]])
    sit(run, f"verdicts:{path}", tmp_path / "p.jsonl", "bo")
    assert len(picks_of(tmp_path / "p.jsonl")) == 1


def test_a_two_sided_design_is_refused(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, "preference", trials=2))
    path = write_verdicts(
        tmp_path / "v.json", [{"pairId": "modelA--q1", "judge": "al", "choice": "left"}]
    )
    message = refused(run, f"verdicts:{path}", tmp_path / "p.jsonl")
    assert "this run's design has no candidates" in message


# --------------------------------------------------------------------------- bt-judge


def one_line_error(result: Result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_bt_judge_refuses_bad_verdicts_and_a_two_sided_design_writing_nothing(
    tmp_path: Path, invoke: Invoke
) -> None:
    run_dir = make_run(tmp_path, "preference", trials=2)
    bad = write_verdicts(tmp_path / "bad.json", [{"pairId": "x--q", "judge": "a", "choice": "up"}])
    error = one_line_error(invoke("judge", run_dir, "--judge", f"verdicts:{bad}"))
    assert "choice 'up' is not left or right" in error
    good = write_verdicts(
        tmp_path / "good.json", [{"pairId": "x--p001", "judge": "a", "choice": "left"}]
    )
    error = one_line_error(invoke("judge", run_dir, "--judge", f"verdicts:{good}", "--force"))
    assert "design has no candidates" in error
    assert not (run_dir / artifacts.PICKS).exists()


def test_the_kind_is_one_registry_line_and_help_says_what_left_means(invoke: Invoke) -> None:
    (kind,) = [k for k in kinds.REGISTRY if k.name == "verdicts"]
    assert (kind.module, kind.arg, kind.records_as) == (
        "blindtest.judging.verdicts",
        "PATH",
        "external",
    )
    assert "verdicts:PATH" in kinds.JUDGE_KINDS
    shown = " ".join(invoke("judge", "--help").stdout.split())
    assert "verdicts:PATH (blind-panel verdicts" in shown
    assert "left and right are options 1 and 2 as trials.jsonl shows each comparison" in shown
