"""The artifact layer: atomic writes, whole-line appends, torn lines, validation, hashes."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blindtest.errors import BadInput
from blindtest.rundir import artifacts


def pick(trial: int, pick: object = 1, judge: str = "alice") -> dict[str, object]:
    return {"schema": "blindtest/picks@1", "trial": trial, "judge": judge, "pick": pick}


def test_sha256_is_over_exact_bytes(tmp_path: Path) -> None:
    data = b'{"a": 1}\n'
    path = tmp_path / "x"
    path.write_bytes(data)
    assert artifacts.sha256_file(path) == hashlib.sha256(data).hexdigest()
    assert artifacts.sha256_bytes(data) == hashlib.sha256(data).hexdigest()


def test_dump_json_is_sorted_indented_and_newline_terminated() -> None:
    assert (
        artifacts.dump_json({"b": 1, "a": [1, 2]})
        == b'{\n  "a": [\n    1,\n    2\n  ],\n  "b": 1\n}\n'
    )


def test_write_bytes_atomic_leaves_no_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    artifacts.write_bytes_atomic(target, b"one")
    artifacts.write_bytes_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_write_json_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    path = tmp_path / "picks.json"
    path.write_bytes(b"keep me")
    record = {"schema": "blindtest/audit@1"}
    with pytest.raises(BadInput, match="already exists; use force=True"):
        artifacts.refuse_overwrite(path, force=False)
    assert path.read_bytes() == b"keep me"
    artifacts.refuse_overwrite(path, force=True)
    with pytest.raises(BadInput, match=r"audit\.json"):
        artifacts.write_json(tmp_path / "audit.json", record, "audit")


def test_validation_names_file_and_pointer() -> None:
    with pytest.raises(BadInput, match=r"picks.jsonl:3: /pick: .*"):
        artifacts.validate(pick(1, pick=7), "picks", "picks.jsonl:3")


def test_unknown_major_version_is_refused_naming_both_tags() -> None:
    record = pick(1) | {"schema": "blindtest/picks@2"}
    with pytest.raises(
        BadInput,
        match=r'picks.jsonl:1: schema tag "blindtest/picks@2" is not supported; '
        r'this blindtest reads "blindtest/picks@1"',
    ):
        artifacts.validate(record, "picks", "picks.jsonl:1")


def test_wrong_artifact_kind_is_refused() -> None:
    with pytest.raises(BadInput, match="is not a picks artifact"):
        artifacts.validate(pick(1) | {"schema": "blindtest/trials@1"}, "picks", "x")


def test_appender_writes_whole_lines_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    with artifacts.JsonlAppender(path, "picks") as out:
        for trial in range(1, 4):
            out.append(pick(trial))
    data = path.read_bytes()
    assert data.count(b"\n") == 3
    assert data.endswith(b"\n")
    assert [r["trial"] for r in artifacts.read_jsonl(path, "picks").records] == [1, 2, 3]


def test_appender_refuses_invalid_record_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    with artifacts.JsonlAppender(path, "picks") as out, pytest.raises(BadInput):
        out.append(pick(0))
    assert path.read_bytes() == b""


def test_torn_final_line_is_reported_and_ignored(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    good = artifacts.dump_line(pick(1)) + artifacts.dump_line(pick(2))
    path.write_bytes(good + b'{"schema": "blindtest/pi')
    contents = artifacts.read_jsonl(path, "picks")
    assert [r["trial"] for r in contents.records] == [1, 2]
    assert contents.torn_line == 3


def test_corrupt_line_elsewhere_is_rejected_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    path.write_bytes(artifacts.dump_line(pick(1)) + b"{oops\n" + artifacts.dump_line(pick(3)))
    with pytest.raises(BadInput, match=r"picks.jsonl:2: not valid JSON"):
        artifacts.read_jsonl(path, "picks")


def test_terminated_corrupt_last_line_is_corruption_not_a_tear(tmp_path: Path) -> None:
    # A torn append never ends in a newline; a bad line that does was written that way.
    path = tmp_path / artifacts.PICKS
    path.write_bytes(artifacts.dump_line(pick(1)) + b"{oops\n")
    with pytest.raises(BadInput, match=r"picks.jsonl:2"):
        artifacts.read_jsonl(path, "picks")


def test_repair_removes_torn_tail_and_appends_continue_cleanly(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    path.write_bytes(artifacts.dump_line(pick(1)) + b'{"schema": "blind')
    with artifacts.JsonlAppender(path, "picks") as out:
        out.append(pick(2))
    contents = artifacts.read_jsonl(path, "picks")
    assert [r["trial"] for r in contents.records] == [1, 2]
    assert contents.torn_line is None


def test_repair_keeps_a_complete_record_missing_only_its_newline(tmp_path: Path) -> None:
    path = tmp_path / artifacts.PICKS
    path.write_bytes(artifacts.dump_line(pick(1)) + artifacts.dump_line(pick(2)).rstrip(b"\n"))
    assert artifacts.repair_torn_tail(path)
    assert [r["trial"] for r in artifacts.read_jsonl(path, "picks").records] == [1, 2]


def test_kill_mid_append_loses_at_most_the_line_being_written(tmp_path: Path) -> None:
    """A child process appending in a loop is SIGKILLed; every complete line survives."""
    path = tmp_path / artifacts.PICKS
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from blindtest.rundir import artifacts
        out = artifacts.JsonlAppender(Path({str(path)!r}), "picks", fsync=False)
        trial = 1
        while True:
            out.append({{"schema": "blindtest/picks@1", "trial": trial, "judge": "j" * 2000,
                         "pick": 1}})
            if trial == 50:
                print("ready", flush=True)
            trial += 1
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"ready"
    child.kill()
    child.wait()
    child.stdout.close()
    contents = artifacts.read_jsonl(path, "picks")
    trials = [r["trial"] for r in contents.records]
    assert trials == list(range(1, len(trials) + 1))
    assert len(trials) >= 50


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="no such file"):
        artifacts.read_json(tmp_path / "report.json", "report")
    assert artifacts.read_jsonl(tmp_path / "x.jsonl", "picks", missing_ok=True).records == []


def test_design_refused_when_its_bytes_no_longer_match_the_hash(tmp_path: Path) -> None:
    design_path = tmp_path / artifacts.DESIGN
    design_path.write_bytes(b"{}\n")
    (tmp_path / artifacts.DESIGN_HASH).write_text(hashlib.sha256(b"{}").hexdigest() + "\n")
    with pytest.raises(BadInput, match=r"no longer matches design\.sha256"):
        artifacts.load_design(tmp_path)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_dump_json_round_trips_and_is_stable(value: object) -> None:
    data = artifacts.dump_json(value)
    assert orjson.loads(data) == value
    assert artifacts.dump_json(orjson.loads(data)) == data


@settings(max_examples=100, deadline=None)
@given(
    judges=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=10),
    cut=st.integers(min_value=1, max_value=400),
)
def test_any_torn_tail_is_recovered(
    tmp_path_factory: pytest.TempPathFactory, judges: list[str], cut: int
) -> None:
    path = tmp_path_factory.mktemp("torn") / artifacts.PICKS
    lines = [artifacts.dump_line(pick(i, judge=j)) for i, j in enumerate(judges, start=1)]
    last = lines[-1]
    # Cut inside the JSON text: losing only the newline leaves a whole record, which is kept.
    torn = last[: min(cut, len(last) - 2)]
    path.write_bytes(b"".join(lines[:-1]) + torn)
    contents = artifacts.read_jsonl(path, "picks")
    assert len(contents.records) == len(judges) - 1
    artifacts.repair_torn_tail(path)
    assert path.read_bytes() == b"".join(lines[:-1])
    assert os.path.getsize(path) == sum(len(line) for line in lines[:-1])
