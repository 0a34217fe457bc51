"""bt-verify: a clean run recomputes (exit 0); every tampering, each on its own copy of the run,
exits 1 with a diff line a person can read."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.pipeline.recompute import Difference, diff, verify_run
from blindtest.rundir import artifacts

from report_runs import (
    balanced_outcomes,
    cli,
    load,
    make_run,
    numbered_prompts,
    pair_picks,
    preference_picks,
    triangle_picks,
    write_picks,
)

DIFF_LINE = "DIFFERS  {where}: recorded {recorded}, recomputed {recomputed}"


def build(root: Path, protocol: str = "triangle", **options: Any) -> Path:
    """A finished run: design, responses, trials, picks, audit and report (``"panel"``: a
    preference run judged by two)."""
    kind, protocol = protocol, "preference" if protocol == "panel" else protocol
    run = make_run(root, protocol, 20, prices={"A": (1.0, 5.0), "B": (0.5, 2.0)}, **options)
    design = load(run)
    picks = {
        "triangle": lambda: triangle_picks(design, 14),
        "pair": lambda: pair_picks(design, 15),
        "preference": lambda: preference_picks(design, balanced_outcomes(design, 12, 5)),
        "panel": lambda: (
            preference_picks(design, balanced_outcomes(design, 12, 5))
            + preference_picks(design, balanced_outcomes(design, 11, 6), judge="bob")
        ),
    }[kind]()
    write_picks(run / artifacts.PICKS, picks)
    for stage in (("audit", run), ("analyze", run, "--quiet")):
        result = cli(*stage)
        assert result.exit_code == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("clean"))


@pytest.fixture
def run(clean: Path, tmp_path: Path) -> Path:
    """A private copy of the clean run, to tamper with."""
    return Path(shutil.copytree(clean, tmp_path / "run"))


def verify(run: Path) -> Any:
    return cli("verify", run)


def assert_caught(result: Any, *lines: str) -> None:
    """Exit 1, each expected line among the DIFFERS lines, and the closing count."""
    assert result.exit_code == 1, result.stdout + result.stderr
    differs = [s for s in result.stdout.splitlines() if s.startswith("DIFFERS  ")]
    assert differs, result.stdout
    for line in lines:
        assert any(s.startswith(line) for s in differs), (line, differs)
    assert result.stdout.splitlines()[-1] == (
        f"{len(differs)} difference(s): this run directory does not recompute"
    )


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = orjson.loads(path.read_bytes())
    change(document)
    path.write_bytes(artifacts.dump_json(document))


def edit_lines(path: Path, change: Callable[[list[dict[str, Any]]], object]) -> None:
    records = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    change(records)
    path.write_bytes(b"".join(artifacts.dump_line(r) for r in records))


# --------------------------------------------------------------------------- clean runs


def test_a_clean_run_recomputes(clean: Path) -> None:
    result = verify(clean)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines() == [
        "checked  design.sha256",
        "checked  prompt hashes",
        "checked  arrangement from the seed",
        "checked  the run is whole (every slot answered, trials.jsonl present)",
        "checked  responses.jsonl texts from raw_text under the design's normalization",
        "checked  responses.jsonl answers made for the requests the design asks now",
        "checked  trials.jsonl from responses.jsonl",
        "checked  picks.jsonl against the design hash",
        "checked  generation.json from responses.jsonl",
        "checked  audit.json",
        "checked  report.json from its inputs",
        "verified: everything recomputes",
    ]


@pytest.mark.parametrize("protocol", ["pair", "preference"])
def test_clean_pair_and_preference_runs_recompute(tmp_path: Path, protocol: str) -> None:
    result = verify(build(tmp_path, protocol))
    assert result.exit_code == 0, result.stdout


def test_a_panels_agreement_interval_recomputes_exactly(tmp_path: Path) -> None:
    run = build(tmp_path, "panel")
    recorded = orjson.loads((run / artifacts.REPORT).read_bytes())["agreement"]
    assert recorded["alpha"]["interval"] is not None
    result = verify(run)
    assert result.exit_code == 0, result.stdout
    (run / artifacts.REPORT).unlink()
    assert cli("analyze", run, "--quiet").exit_code == 0
    again = orjson.loads((run / artifacts.REPORT).read_bytes())["agreement"]
    assert again["alpha"] == recorded["alpha"]


def test_a_run_with_only_design_and_picks_recomputes_but_is_incomplete(tmp_path: Path) -> None:
    # the report recomputes, but a run without responses is not whole, so it is
    # never "verified" (exit 1, naming what is missing).
    run = make_run(tmp_path, text=None)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 9))
    assert cli("analyze", run, "--quiet").exit_code == 0
    result = verify(run)
    assert result.exit_code == 1
    assert "DIFFERS" not in result.stdout
    assert "checked  report.json from its inputs" not in result.stdout
    assert "incomplete: 0 of 60 responses (responses.jsonl missing), trials.jsonl missing" in (
        result.stdout
    )


def test_verify_json_lists_the_differences(run: Path) -> None:
    edit_json(run / artifacts.REPORT, lambda r: r.update(correct=20))
    result = cli("verify", run, "--json")
    assert result.exit_code == 1
    document = orjson.loads(result.stdout)
    assert document["ok"] is False
    assert {"where": "report.json/correct", "recorded": 20, "recomputed": 14} in (
        document["differences"]
    )


def test_verify_of_a_directory_without_a_design_is_bad_input(tmp_path: Path) -> None:
    result = verify(tmp_path)
    assert result.exit_code == 2
    assert result.stderr == f"blindtest: error: {tmp_path}: no design.json; not a run directory\n"


# --------------------------------------------------------------------------- one tampering each


def test_one_flipped_pick_is_caught(run: Path) -> None:
    odd = load(run)["arrangement"][0]["odd_position"]  # trial 1 was judged right
    edit_lines(run / artifacts.PICKS, lambda rows: rows[0].update(pick=odd % 3 + 1))
    picks_hash = hashlib.sha256((run / artifacts.PICKS).read_bytes()).hexdigest()
    assert_caught(
        verify(run),
        "DIFFERS  report.json/correct: recorded 14, recomputed 13",
        'DIFFERS  report.json/inputs/picks.jsonl: recorded "',
    )
    assert f'recomputed "{picks_hash}"' in verify(run).stdout


def test_one_edited_response_text_is_caught(run: Path) -> None:
    def edit(rows: list[dict[str, Any]]) -> None:
        rows[4]["text"] = rows[4]["text"].replace("w3", "w3 indeed")

    edit_lines(run / artifacts.RESPONSES, edit)
    trial, slot = 2, 2  # row 5 is trial 2, slot 2
    assert_caught(verify(run), f"DIFFERS  trials.jsonl/{trial - 1}/options/{slot - 1}: recorded ")
    assert "indeed" in verify(run).stdout


def test_a_changed_seed_is_caught_by_the_design_hash(run: Path) -> None:
    edit_json(run / artifacts.DESIGN, lambda d: d.update(seed="another seed"))
    actual = hashlib.sha256((run / artifacts.DESIGN).read_bytes()).hexdigest()
    recorded = (run / artifacts.DESIGN_HASH).read_text().strip()
    assert_caught(
        verify(run),
        f'DIFFERS  design.sha256: recorded "{recorded}", recomputed "{actual}"',
        "DIFFERS  design.json/arrangement/",
    )


def test_a_changed_seed_with_a_rewritten_hash_is_caught_by_the_arrangement(run: Path) -> None:
    edit_json(run / artifacts.DESIGN, lambda d: d.update(seed="another seed"))
    digest = hashlib.sha256((run / artifacts.DESIGN).read_bytes()).hexdigest()
    (run / artifacts.DESIGN_HASH).write_text(digest + "\n")
    result = verify(run)
    assert_caught(result, "DIFFERS  design.json/arrangement/")
    assert "DIFFERS  design.sha256" not in result.stdout
    assert "checked  report.json not recomputed: its inputs already differ" in result.stdout


def test_an_edited_design_hash_is_caught(run: Path) -> None:
    recorded = (run / artifacts.DESIGN_HASH).read_text().strip()
    forged = hashlib.sha256(b"something else").hexdigest()
    (run / artifacts.DESIGN_HASH).write_text(forged + "\n")
    assert_caught(
        verify(run), f'DIFFERS  design.sha256: recorded "{forged}", recomputed "{recorded}"'
    )


def test_a_garbled_design_hash_is_caught_not_refused(run: Path) -> None:
    (run / artifacts.DESIGN_HASH).write_text("not a hash\n")
    assert_caught(verify(run), 'DIFFERS  design.sha256: recorded "design.sha256: expected 64 hex')


def test_an_edited_report_number_is_caught(run: Path) -> None:
    recorded = orjson.loads((run / artifacts.REPORT).read_bytes())["p_value"]
    edit_json(run / artifacts.REPORT, lambda r: r.update(p_value=0.19))
    assert_caught(
        verify(run), f"DIFFERS  report.json/p_value: recorded 0.19, recomputed {recorded}"
    )


def test_an_edited_report_statement_is_caught(run: Path) -> None:
    def soften(report: dict[str, Any]) -> None:
        report["statement"] = "You could not tell them apart: the models are the same."

    edit_json(run / artifacts.REPORT, soften)
    assert_caught(verify(run), 'DIFFERS  report.json/statement: recorded "You could not tell')


def test_a_picks_file_that_no_longer_validates_is_caught_with_exit_1(run: Path) -> None:
    edit_lines(run / artifacts.PICKS, lambda rows: rows[2].update(pick=4))
    result = verify(run)
    # Since every picks file is read (for its design hash) before the report.
    assert_caught(
        result, 'DIFFERS  picks.jsonl: recorded "valid artifact", recomputed "picks.jsonl:3'
    )
    assert result.stderr == ""


def test_a_picks_line_that_is_not_json_is_caught_with_exit_1(run: Path) -> None:
    with (run / artifacts.PICKS).open("ab") as picks:
        picks.write(b'{"trial": 3, "judge": \n{"trial": 4}\n')
    assert_caught(verify(run), 'DIFFERS  picks.jsonl: recorded "valid artifact"')


def test_a_deleted_picks_line_is_caught(run: Path) -> None:
    edit_lines(run / artifacts.PICKS, lambda rows: rows.pop(5))  # trial 6, judged right
    # A deleted pick makes the fixed design unfinished: the recomputed report is void.
    assert_caught(verify(run), "DIFFERS  report.json/n: recorded 20, recomputed 19")


def test_a_deleted_line_in_trials_is_caught_with_exit_1(run: Path) -> None:
    lines = (run / artifacts.TRIALS).read_bytes().splitlines(keepends=True)
    (run / artifacts.TRIALS).write_bytes(b"".join(lines[:5] + lines[6:]))
    assert_caught(verify(run), "DIFFERS  trials.jsonl (length): recorded 19, recomputed 20")


def test_a_deleted_line_in_trials_of_an_unaudited_run_is_caught(run: Path) -> None:
    (run / artifacts.AUDIT).unlink()
    (run / artifacts.REPORT).unlink()
    lines = (run / artifacts.TRIALS).read_bytes().splitlines(keepends=True)
    (run / artifacts.TRIALS).write_bytes(b"".join(lines[:5] + lines[6:]))
    assert_caught(verify(run), "DIFFERS  trials.jsonl (length): recorded 19, recomputed 20")


def test_a_deleted_line_in_responses_is_caught(run: Path) -> None:
    edit_lines(run / artifacts.RESPONSES, lambda rows: rows.pop(7))
    result = verify(run)
    assert result.exit_code == 1
    assert "incomplete: 59 of 60 responses;" in result.stdout
    assert "verified" not in result.stdout.replace("cannot be verified", "")


def test_a_response_that_no_longer_validates_is_caught_with_exit_1(run: Path) -> None:
    edit_lines(run / artifacts.RESPONSES, lambda rows: rows[0].update(side="C"))
    assert_caught(verify(run), 'DIFFERS  responses.jsonl: recorded "valid artifact", recomputed')


@pytest.mark.parametrize(
    "name",
    [
        "design.json",
        "responses.jsonl",
        "trials.jsonl",
        "picks.jsonl",
        "audit.json",
        "report.json",
        "generation.json",
    ],
)
def test_any_artifact_that_no_longer_validates_is_evidence_exit_1_not_2(
    run: Path, name: str
) -> None:
    # An unknown major version of the artifact's own schema tag: valid JSON, invalid artifact.
    path = run / name
    tag = artifacts.schema_tag(name.split(".")[0]).encode()
    data = path.read_bytes().replace(tag, tag.replace(b"@1", b"@9"), 1)
    path.write_bytes(data)
    if name == artifacts.DESIGN:  # re-hash, so that only the schema can object
        digest = hashlib.sha256(data).hexdigest()
        (run / artifacts.DESIGN_HASH).write_text(digest + "\n")
    result = verify(run)
    assert_caught(result)
    assert result.stderr == ""
    assert tag.replace(b"@1", b"@9").decode() in result.stdout


def test_a_design_that_is_not_json_is_caught_with_exit_1(run: Path) -> None:
    (run / artifacts.DESIGN).write_bytes(b'{"schema": "blindtest/design@1", ')
    result = verify(run)
    assert_caught(
        result, "DIFFERS  design.sha256: recorded ", 'DIFFERS  design.json: recorded "valid'
    )
    assert result.stderr == ""


def test_an_edited_audit_is_caught(run: Path) -> None:
    def boast(audit: dict[str, Any]) -> None:
        audit["bots"]["length"]["correct"] = 7

    edit_json(run / artifacts.AUDIT, boast)
    assert_caught(verify(run), "DIFFERS  audit.json/bots/length/correct: recorded 7, recomputed 20")


def test_an_edited_census_is_caught(run: Path) -> None:
    edit_json(run / artifacts.AUDIT, lambda a: a["census"]["A"]["totals"].update(em_dashes=9))
    assert_caught(verify(run), "DIFFERS  audit.json/census/A/totals/em_dashes: recorded 9")


def test_an_edited_prompt_is_caught_by_its_hash(run: Path) -> None:
    def edit(design: dict[str, Any]) -> None:
        design["prompts"][3]["text"] = "A different question?"

    edit_json(run / artifacts.DESIGN, edit)
    digest = hashlib.sha256((run / artifacts.DESIGN).read_bytes()).hexdigest()
    (run / artifacts.DESIGN_HASH).write_text(digest + "\n")
    assert_caught(verify(run), "DIFFERS  design.json/prompts/3/sha256: recorded ")


def test_a_deleted_picks_file_is_caught(run: Path) -> None:
    (run / artifacts.PICKS).unlink()
    result = verify(run)
    # The recorded path is cut past 120 characters like any long value: pytest's temporary
    # folder has no fixed length, so the line is matched by its ends.
    assert_caught(result, 'DIFFERS  report.json/picks_files: recorded "')
    [line] = [s for s in result.stdout.splitlines() if "report.json/picks_files" in s]
    assert line.endswith(', recomputed "missing: the report\'s input is gone"')
    recorded = str(run / "picks.jsonl")
    assert recorded in line or recorded.startswith(line.split('recorded "')[1].split("...")[0])


def test_a_deleted_design_hash_is_caught(run: Path) -> None:
    (run / artifacts.DESIGN_HASH).unlink()
    assert_caught(verify(run), "DIFFERS  design.sha256: recorded ")


def test_a_report_whose_inputs_were_redone_is_caught(run: Path) -> None:
    # Judged again with other picks, but the report was left as it was.
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 9))
    assert_caught(verify(run), "DIFFERS  report.json/correct: recorded 14, recomputed 9")


# --------------------------------------------------------------------------- mechanical checks


def test_edited_check_results_are_caught(tmp_path: Path) -> None:
    run = build(
        tmp_path, prompts=numbered_prompts(20, check=lambda i: {"regex": r"w1[0-9]"})
    )  # passes with 11+ words: every A response (20 words), no B response (10)
    audit = orjson.loads((run / artifacts.AUDIT).read_bytes())
    assert audit["checks"]["pass"]["B"]["passed"] == 0
    edit_json(run / artifacts.AUDIT, lambda a: a["checks"]["pass"]["B"].update(passed=30))
    assert cli("analyze", run, "--force", "--quiet").exit_code == 0
    assert_caught(verify(run), "DIFFERS  audit.json/checks/pass/B/passed: recorded 30")


def test_edited_token_counts_and_cost_are_caught(run: Path) -> None:
    def forge(generation: dict[str, Any]) -> None:
        generation["roles"]["A"] |= {"completion_tokens": 3, "cost": 0.000001}

    edit_json(run / artifacts.GENERATION, forge)
    assert cli("analyze", run, "--force", "--quiet").exit_code == 0
    assert_caught(verify(run), "DIFFERS  generation.json/roles/A/")


# --------------------------------------------------------------------------- sequential and more


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("sequential"), sequential=True)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 4, trials=range(1, 5)))
    assert cli("analyze", run, "--quiet").exit_code == 0
    return run


def test_a_clean_sequential_run_recomputes_with_its_e_values(sequential: Path) -> None:
    result = verify(sequential)
    assert result.exit_code == 0, result.stdout
    assert (sequential / artifacts.E_VALUES).exists()


def test_edited_e_values_are_caught(sequential: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(sequential, tmp_path / "run"))
    edit_lines(run / artifacts.E_VALUES, lambda rows: rows[0].update(log_e=3.5))
    assert_caught(verify(run), "DIFFERS  e_values.jsonl/0/log_e: recorded 3.5, recomputed ")


def test_deleted_e_values_are_caught(sequential: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(sequential, tmp_path / "run"))
    (run / artifacts.E_VALUES).unlink()
    assert verify(run).exit_code == 1


def test_a_second_judges_report_is_verified_too(run: Path) -> None:
    bot = run / "picks-bot.jsonl"
    assert cli("judge", run, "--judge", "bot:length", "--out", bot, "--quiet").exit_code == 0
    made = cli("analyze", run, "--picks", bot, "--out", run / "report-bot.json", "--quiet")
    assert made.exit_code == 0, made.stderr
    assert "checked  report-bot.json from its inputs" in verify(run).stdout
    assert verify(run).exit_code == 0
    edit_json(run / "report-bot.json", lambda r: r.update(correct=3))
    assert_caught(verify(run), "DIFFERS  report-bot.json/correct: recorded 3, recomputed 20")


# --------------------------------------------------------------------------- the diff itself


def test_diff_names_each_leaf_by_json_pointer() -> None:
    recorded = {"a": [1, 2, {"b": 0.5}], "c": "x", "gone": 1}
    recomputed = {"a": [1, 3, {"b": 0.5 * (1 + 1e-12)}], "c": "y", "new": 2}
    assert list(diff(recorded, recomputed)) == [
        Difference("/a/1", 2, 3),
        Difference("/c", "x", "y"),
        Difference("/gone", 1, None),
        Difference("/new", None, 2),
    ]
    assert str(Difference("report.json/n", 20, 19)) == "report.json/n: recorded 20, recomputed 19"
    assert list(diff([1, 2, 3], [1, 2])) == [Difference(" (length)", 3, 2)]


def test_floats_recomputed_elsewhere_may_differ_in_the_last_bits_only() -> None:
    assert list(diff(0.1 + 0.2, 0.3)) == []
    assert list(diff(0.19, 0.1905)) == [Difference("/", 0.19, 0.1905)]
    assert list(diff(1, 1.0)) == []


def test_verify_run_as_a_library_returns_structured_differences(run: Path) -> None:
    edit_json(run / artifacts.REPORT, lambda r: r.update(n=21))
    result = verify_run(run)
    assert not result.ok
    assert Difference("report.json/n", 21, 20) in result.differences
    assert result.to_dict()["ok"] is False
