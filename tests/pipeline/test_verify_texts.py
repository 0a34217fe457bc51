"""bt-verify re-derives every responses.jsonl row's ``text`` (and its ``identity_stripped``
counts) from the row's raw answer under the design's recorded normalization, with the function
bt-generate used (``normalize.normalize_answer``). A text edited by hand, with trials.jsonl
edited alike, used to pass; it is now a difference naming the rows. Untampered runs of every
kind (each protocol, laundering, identity stripping firing, --strip-formatting,
--truncate-match, batch import, --from-dirs) still verify."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.model.normalize import count_words, normalize_answer
from blindtest.pipeline.recompute import TEXTS_CHECK, Summary, verify_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from endpoint_fixtures import through_batch_api

#: The simulated models name themselves when asked who they are (identity stripping fires);
#: their answers carry markdown (--strip-formatting changes them).
PROMPTS = [
    "Who are you? Explain how to plan a vegetable garden.",
    "Who are you, and how do vaccines work?",
    "Introduce yourself, then explain how to learn the piano.",
    "How should I structure a monthly budget?",
    "What makes a good code review?",
    "Who are you? Describe how to train for a marathon.",
]


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def write_records(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(artifacts.dump_line(r) for r in rows))


def design(invoke: Invoke, run: Path, url: str, tmp_path: Path, protocol: str, *extra: Any) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    made = invoke(
        "design", run, "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", url, "--b-url", url, "--protocol", protocol, "--trials", len(PROMPTS),
        "--seed", "verify-texts", *extra,
    )  # fmt: skip
    assert made.exit_code == 0, made.output


def generated(invoke: Invoke, run: Path, url: str, tmp_path: Path, *extra: Any) -> Path:
    design(invoke, run, url, tmp_path, "preference", *extra)
    done = invoke("generate", run, "--quiet")
    assert done.exit_code == 0, done.output
    return run


def assert_verifies(run: Path) -> None:
    result = verify_run(run)
    assert result.ok, [str(d) for d in result.differences] + result.missing
    assert TEXTS_CHECK in result.checked


def edit_alike(run: Path, row: dict[str, Any], new_text: str) -> None:
    """Change one answer's text in responses.jsonl and in trials.jsonl alike, as a person
    editing both files would (so the rebuilt blinded view still matches)."""
    old = orjson.dumps(row["text"])[1:-1]
    trials = (run / "trials.jsonl").read_bytes()
    assert trials.count(old) == 1
    (run / "trials.jsonl").write_bytes(trials.replace(old, orjson.dumps(new_text)[1:-1]))
    rows = records(run / "responses.jsonl")
    for each in rows:
        if (each["trial"], each["slot"], each.get("stage")) == (
            row["trial"],
            row["slot"],
            row.get("stage"),
        ):
            each["text"] = new_text
    write_records(run / "responses.jsonl", rows)


# ------------------------------------------------------------------------------ tampering


def test_verify_texts_hand_edited_text_with_trials_edited_alike_fails_naming_the_row(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated(invoke, tmp_path / "run", simulator.base_url, tmp_path)
    rows = records(run / "responses.jsonl")
    target = next(r for r in rows if r.get("identity_stripped"))  # raw_text recorded beside it
    edit_alike(run, target, target["text"] + " This answer is clearly the better one.")

    result = verify_run(run)
    assert not result.ok
    # The blinded view matches the edited responses: only the new check sees the edit.
    assert not any(d.where.startswith("trials.jsonl") for d in result.differences)
    summary = [d for d in result.differences if isinstance(d, Summary)]
    assert len(summary) == 1
    name = f"trial {target['trial']} slot {target['slot']}"
    assert str(summary[0]).startswith(
        f"responses.jsonl: 1 of {len(rows)} rows does not hold the design's normalization of "
        "the raw answer recorded in it (text, identity_stripped from raw_text): " + name
    )
    detail = [d for d in result.differences if d.where.endswith("/text")]
    assert len(detail) == 1
    assert name in detail[0].where
    assert detail[0].recomputed == target["text"]

    shown = invoke("verify", run)
    assert shown.exit_code == 1
    assert f"checked  {TEXTS_CHECK}" in shown.stdout
    assert f"DIFFERS  responses.jsonl: 1 of {len(rows)} rows does not hold" in shown.stdout
    as_json = orjson.loads(invoke("verify", run, "--json").stdout)
    assert as_json["ok"] is False
    assert as_json["differences"][0]["recorded"] == 1


def test_verify_texts_identity_stripped_counts_edited_fail(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated(invoke, tmp_path / "run", simulator.base_url, tmp_path)
    rows = records(run / "responses.jsonl")
    target = next(r for r in rows if r.get("identity_stripped"))
    del target["identity_stripped"]  # hides that identity stripping fired in this answer
    write_records(run / "responses.jsonl", rows)
    result = verify_run(run)
    assert not result.ok
    where = [d.where for d in result.differences]
    assert any(w.endswith("/identity_stripped") for w in where), where
    assert any(f"trial {target['trial']} slot {target['slot']}" in w for w in where)


def test_verify_texts_text_without_raw_text_that_normalization_would_change_fails(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    # With --strip-formatting, a row with no raw_text claims normalization changed nothing;
    # markdown in its text says otherwise.
    run = generated(invoke, tmp_path / "run", simulator.base_url, tmp_path, "--strip-formatting")
    rows = records(run / "responses.jsonl")
    target = next(r for r in rows if "raw_text" not in r)
    edit_alike(run, target, "**Bold** claim: " + target["text"])
    result = verify_run(run)
    assert not result.ok
    assert any(isinstance(d, Summary) for d in result.differences)


def test_verify_texts_many_rows_counted_first_three_named(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated(invoke, tmp_path / "run", simulator.base_url, tmp_path, "--strip-formatting")
    rows = records(run / "responses.jsonl")
    for row in rows[:5]:
        row["text"] += " **edited**"  # markup the design's --strip-formatting would remove
    write_records(run / "responses.jsonl", rows)
    result = verify_run(run)
    summary = next(d for d in result.differences if isinstance(d, Summary))
    assert f"5 of {len(rows)} rows do not hold" in str(summary)
    named = re.findall(r"trial \d+ slot \d+", str(summary))
    assert named == [f"trial {r['trial']} slot {r['slot']}" for r in rows[:3]]
    assert str(summary).endswith(", ...")
    assert summary.recorded == 5


def test_verify_texts_failure_row_carrying_a_raw_text_fails(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = generated(invoke, tmp_path / "run", simulator.base_url, tmp_path)
    rows = records(run / "responses.jsonl")
    failed = dict(rows[0], status="failed", text=None, error="timeout", kind="timeout")
    failed["raw_text"] = "an answer hidden in a failure row"
    write_records(run / "responses.jsonl", [failed, *rows])
    result = verify_run(run)
    assert any(d.where.endswith("/raw_text") for d in result.differences), result.differences


def test_verify_texts_identity_rules_of_another_version_are_a_difference(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, tmp_path, "preference")
    document = orjson.loads((run / "design.json").read_bytes())
    document["normalization"]["identity_strip"]["version"] = "blindtest/identity@0"
    artifacts.write_design(run, document, force=True)
    assert invoke("generate", run, "--quiet").exit_code == 0
    result = verify_run(run)
    assert any(
        d.where == "design.json/normalization/identity_strip/version" for d in result.differences
    )


# ------------------------------------------------------------------------- untampered runs


@pytest.mark.parametrize(
    ("protocol", "extra"),
    [
        ("triangle", ()),
        ("pair", ("--temperature", "0")),
        ("preference", ()),
        ("preference", ("--strip-formatting",)),
        ("preference", ("--truncate-match", "--strip-formatting")),
        ("triangle", ("--truncate-match",)),
        ("preference", ("--no-strip-identity",)),
    ],
)
def test_verify_texts_untampered_live_runs_verify(
    invoke: Invoke,
    simulator: Simulator,
    tmp_path: Path,
    protocol: str,
    extra: tuple[str, ...],
) -> None:
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, tmp_path, protocol, *extra)
    assert invoke("generate", run, "--quiet").exit_code == 0
    rows = records(run / "responses.jsonl")
    if "--no-strip-identity" not in extra:
        assert any(r.get("identity_stripped") for r in rows)  # stripping fired
    assert_verifies(run)


def test_verify_texts_untampered_laundered_run_verifies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    url = simulator.base_url
    run = generated(
        invoke, tmp_path / "run", url, tmp_path, "--launder", "sim-launder", "--launder-url", url,
        "--strip-formatting",
    )  # fmt: skip
    rows = records(run / "responses.jsonl")
    laundered = [r for r in rows if r["stage"] == "launder"]
    assert laundered
    # A laundered row's text is the launderer's rewrite normalized, not the candidate's answer.
    for row in laundered:
        source = row.get("raw_text", row["text"])
        design_record = orjson.loads((run / "design.json").read_bytes())
        assert normalize_answer(design_record["normalization"], source)[0] == row["text"]
    assert_verifies(run)
    # And an edit to a laundered row is found like any other.
    target = next(r for r in laundered if "raw_text" in r)
    edit_alike(run, target, target["text"] + " Edited.")
    result = verify_run(run)
    summary = next(d for d in result.differences if isinstance(d, Summary))
    assert f"trial {target['trial']} slot {target['slot']} launder" in str(summary)


def test_verify_texts_untampered_batch_imported_run_verifies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, tmp_path, "preference", "--strip-formatting")
    exported = tmp_path / "in.jsonl"
    assert invoke("generate", run, "--batch-export", exported).exit_code == 0
    output, _ = through_batch_api(simulator, exported.read_bytes())
    results = tmp_path / "out.jsonl"
    results.write_bytes(output)
    imported = invoke("generate", run, "--batch-import", results)
    assert imported.exit_code == 0, imported.output
    assert any(r.get("identity_stripped") for r in records(run / "responses.jsonl"))
    assert_verifies(run)


def test_verify_texts_untampered_from_dirs_run_verifies(invoke: Invoke, tmp_path: Path) -> None:
    a, b = tmp_path / "gpt-4o", tmp_path / "claude-3-5-sonnet"
    a.mkdir()
    b.mkdir()
    for i in range(4):
        (a / f"q{i}.md").write_text(f"As an AI language model, I answer **{i}** (GPT-4o).\n")
        (b / f"q{i}.md").write_text(f"I'm Claude, and I answer *{i}*.\n")
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--from-dirs", a, b, "--protocol", "preference", "--trials", 4,
        "--strip-formatting", "--truncate-match", "--seed", "verify-texts",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    rows = records(run / "responses.jsonl")
    assert all(r.get("identity_stripped") and "raw_text" in r for r in rows)
    assert_verifies(run)
    # Words added past the cut change nothing the judge sees (trials.jsonl is as rebuilt), but
    # the row no longer holds its file's text.
    longer = max(rows, key=lambda r: count_words(r["text"]))  # never the one cut to
    longer["text"] += " And more words nobody wrote."
    write_records(run / "responses.jsonl", rows)
    result = verify_run(run)
    assert not any(d.where.startswith("trials.jsonl") for d in result.differences)
    assert any(isinstance(d, Summary) for d in result.differences)


def test_verify_texts_run_with_failure_rows_then_finished_verifies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    from blindtest.simulator import FaultMix

    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, tmp_path, "preference", "--strip-formatting")
    simulator.config.mix = FaultMix({"500": 0.4}, seed=3)  # failed for good: failure rows
    first = invoke("generate", run, "--quiet", "--max-retries", "0")
    assert first.exit_code == 3, first.output
    rows = records(run / "responses.jsonl")
    assert any(r["status"] == "failed" for r in rows)
    unfinished = verify_run(run)
    assert unfinished.missing
    assert not unfinished.differences, [str(d) for d in unfinished.differences]
    simulator.config.mix = None
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert any(r["status"] == "failed" for r in records(run / "responses.jsonl"))
    assert_verifies(run)


def test_verify_texts_design_recording_no_identity_rules_version_verifies(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    # identity_strip.version is optional in the schema: absent means the first rules.
    run = tmp_path / "run"
    design(invoke, run, simulator.base_url, tmp_path, "preference")
    document = orjson.loads((run / "design.json").read_bytes())
    del document["normalization"]["identity_strip"]["version"]
    artifacts.write_design(run, document, force=True)
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert any(r.get("identity_stripped") for r in records(run / "responses.jsonl"))
    assert_verifies(run)
