"""The result screen and the end of a session wrap their prose between words to the width of
the terminal (or at 80 into a pipe or a file), and never cut a word, a path or a command to
copy; tables keep their columns (closing note of session 3, "noticed and left alone": prose
lines of 150-400 characters were printed whole, and an 80-column terminal broke them
mid-word)."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import re
import shlex
import struct
import sys
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pexpect
import pytest

from blindtest.present import hints, screen
from blindtest.present.hints import stage_command
from blindtest.present.render import format_summary
from blindtest.present.screen import Verbatim, screen_width, wrap
from blindtest.rundir import artifacts
from blindtest.rundir.types import ReportRecord

from judge_runs import strip_ansi
from report_runs import (
    balanced_outcomes,
    cli,
    load,
    make_run,
    pair_picks,
    preference_picks,
    read_report,
    triangle_picks,
    write_picks,
)
from screen_text import flat

PIPE_WIDTH = 80
#: A blindtest command as the screen prints it (bare, or the script's path).
COMMAND = re.compile(r"(\S*/)?bt-[a-z]+ ")


def _judged(tmp_path: Path, protocol: str) -> Path:
    """An audited run judged by one person: bots, census, channels, next step, tables."""
    run = make_run(tmp_path, protocol, 20, name=protocol)
    design = load(run)
    if protocol == "triangle":
        picks = triangle_picks(design, 15)
    elif protocol == "pair":
        picks = pair_picks(design, 17)
    else:
        picks = preference_picks(design, balanced_outcomes(design, 14, 4))
        for pick in picks:  # a reason as long as the per-trial table shows
            pick["reason"] = "the first paragraph answered the question and the second " * 2
    write_picks(run / artifacts.PICKS, picks)
    assert cli("audit", run).exit_code == 0
    return run


@pytest.fixture(params=["triangle", "preference", "pair"])
def judged_run(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return _judged(tmp_path, str(request.param))


def _screen(run: Path, monkeypatch: pytest.MonkeyPatch, columns: str | None) -> str:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    result = cli("analyze", run, "--force")
    assert result.exit_code in (0, 1), result.stderr
    return str(result.stdout)


def _too_wide(text: str, width: int) -> list[str]:
    """The lines wider than ``width`` that are neither one command nor one word (a path, a
    URL) on a line of their own, nor a table row (columns two spaces apart)."""
    return [
        line
        for line in text.splitlines()
        if len(line) > width
        and " " in line.strip()
        and not COMMAND.match(line.strip())
        and "  " not in line.strip()
    ]


def _prose(text: str) -> str:
    """The screen without its table rows (a preference table's reasons are cut to fit)."""
    rows = [line for line in text.splitlines() if "  " not in line.strip()]
    return "\n".join(line for line in rows if not line.startswith("  (reasons cut"))


def test_the_result_screen_into_a_pipe_wraps_prose_at_80_between_words_keeping_every_word(
    judged_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    piped = _screen(judged_run, monkeypatch, None)  # a test's stdout is a pipe
    whole = _screen(judged_run, monkeypatch, "100000")  # COLUMNS asks for one line a paragraph
    assert max(len(line) for line in whole.splitlines()) > 150  # there was prose to wrap
    assert _too_wide(piped, PIPE_WIDTH) == []
    assert flat(_prose(piped)) == flat(_prose(whole))  # every word still there, in order
    assert len(piped.splitlines()) > len(whole.splitlines())
    # no word was cut: every word of the wrapped prose is a word of the whole one
    assert set(_prose(piped).split()) == set(_prose(whole).split())


def test_the_result_screen_at_80_columns_keeps_tables_and_the_next_command_whole(
    judged_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    narrow = _screen(judged_run, monkeypatch, "80").splitlines()
    whole = _screen(judged_run, monkeypatch, "100000").splitlines()
    # Every table row (columns two spaces apart) is printed exactly as laid out (the reasons
    # of a preference table are cut to fit: the next test).
    rows = [line for line in whole if "  " in line.strip() and "the second" not in line]
    assert rows
    assert all(row in narrow for row in rows)
    # A command the screen tells the reader to run is on a line of its own, whole.
    commands = [line for line in whole if line.strip().startswith(stage_command("design"))]
    for command in commands:
        assert command in narrow
    assert _too_wide("\n".join(narrow), 80) == []


def test_a_preference_tables_reasons_are_cut_to_fit_the_terminal_and_said_to_be(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _judged(tmp_path, "preference")
    narrow = _screen(run, monkeypatch, "80").splitlines()
    rows = narrow[narrow.index("Revealed, per trial:") + 1 :][:21]
    assert all(len(row) <= 80 for row in rows)
    assert all(row.endswith("...") for row in rows[1:])
    assert "  (reasons cut to fit the terminal; report.json holds them whole)" in narrow
    reason = read_report(run)["per_trial"][0]["reason"]
    wide = _screen(run, monkeypatch, "200").splitlines()
    assert any(row.endswith(reason[:60]) for row in wide)  # as before: 60 characters
    assert not any(line.startswith("  (reasons cut") for line in wide)
    page = format_summary(cast(ReportRecord, read_report(run)))  # the HTML page's text
    assert reason[:60] in page
    assert "reasons cut" not in page


def test_a_command_inside_a_sentence_stays_whole_and_moves_to_its_own_line() -> None:
    command = ".venv/bin/bt-analyze /tmp/pytest-of-someone/a-long-directory-name/run-12"
    line = f"All 20 trials judged by a person at the keyboard. Run {command} to see the result."
    lines = wrap(line, 60)
    assert lines == [
        "All 20 trials judged by a person at the keyboard. Run",
        f"  {command}",
        "  to see the result.",
    ]
    said = "9 of 20 judged; continue with: bt-judge run --judge-id alice, or ask for help"
    assert wrap(said, 40) == [
        "9 of 20 judged; continue with:",
        "  bt-judge run --judge-id alice, or ask",
        "  for help",
    ]


def test_a_command_whose_path_has_a_space_stays_whole_and_apostrophes_stay_prose() -> None:
    command = shlex.join(["/my files/clone/.venv/bin/python", "-m", "blindtest.cli.demo", "r"])
    lines = wrap(f"9 of 20 judged; continue with: {command}", 40)
    assert lines == ["9 of 20 judged; continue with:", f"  {command}"]
    prose = "the judge's picks and the model's answers are kept, 'quoted' words too"
    assert wrap(prose, 30) == [
        "the judge's picks and the",
        "  model's answers are kept,",
        "  'quoted' words too",
    ]


def test_paths_urls_and_hyphenated_words_are_never_cut() -> None:
    path = "/very/long/directory-with-hyphens/and-more-of-them/to/a/picks-alice.jsonl"
    url = "https://judge.example.com/v1/chat/completions?with=a-long-query-string-indeed"
    line = f"Read: design.json; {path} (20 picks); served by {url}; trials.jsonl; audit.json."
    lines = wrap(line, 40)
    assert path in [part.strip() for part in lines]  # its own line, whole
    assert url + ";" in [part.strip() for part in lines]
    assert flat("\n".join(lines)) == flat(line)
    assert all(len(part) <= 40 for part in lines if " " in part.strip())


def test_backticked_commands_are_kept_together() -> None:
    line = "stdin is not a terminal, so the length bot judges (run `make demo` in a terminal)."
    lines = wrap(line, 36)
    assert any("`make demo`" in part for part in lines)
    assert flat("\n".join(lines)) == line


def test_a_p_value_is_never_parted_from_its_number() -> None:
    line = "  The length bot, which reads nothing but word counts, scored 19/20 (p < 0.000001)"
    assert wrap(line, 72) == [
        "  The length bot, which reads nothing but word counts, scored 19/20",
        "    (p < 0.000001)",
    ]


def test_aligned_rows_and_verbatim_lines_are_left_as_they_are() -> None:
    row = "  A     sim-large  30         11 ms         517+2434       $0.0256  and more columns"
    assert wrap(row, 40) == [row]
    assert wrap(Verbatim("    " + "x " * 40), 20) == ["    " + "x " * 40]
    indented = "  The discrimination is largely explained by length: the length bot reads"
    assert wrap(indented, 40) == [
        "  The discrimination is largely",
        "    explained by length: the length bot",
        "    reads",
    ]


@contextlib.contextmanager
def _terminal(columns: int) -> Iterator[io.TextIOWrapper]:
    """A stream onto a terminal ``columns`` wide (a pseudo-terminal)."""
    parent, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    stream = io.TextIOWrapper(io.FileIO(child, "w"))
    try:
        yield stream
    finally:
        stream.close()
        os.close(parent)


@pytest.mark.parametrize(("columns", "width"), [(80, 79), (120, 100), (200, 100), (30, 29)])
def test_the_width_is_the_terminals_less_one_at_most_100_and_80_into_a_pipe(
    monkeypatch: pytest.MonkeyPatch, columns: int, width: int
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    with _terminal(columns) as stream:
        assert screen_width(stream) == width
    assert screen_width(io.StringIO()) == screen.PIPE_WIDTH == PIPE_WIDTH
    monkeypatch.setenv("COLUMNS", "132")
    assert screen_width(io.StringIO()) == 132  # as asked, uncapped


def _demo_on_a_terminal(tmp_path: Path, columns: int) -> str:
    """``make demo``'s whole chain on a terminal of ``columns`` (stdin from /dev/null, so the
    length bot judges), as the terminal shows it; run from ``tmp_path`` into ``demo``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "MAKELEVEL")}
    argv = f"{shlex.quote(sys.executable)} -m blindtest.cli.demo demo < /dev/null"
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", argv],
        cwd=str(tmp_path),
        env=env,
        dimensions=(24, columns),
        encoding="utf-8",
        timeout=None,  # the demo's end (EOF) is the event waited for, however busy the machine
    )
    log = io.StringIO()
    child.logfile_read = log
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, log.getvalue()[-2000:]
    return strip_ansi(log.getvalue()).replace("\r\n", "\n")


def _command_heads(where: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """How a command starts when printed from ``where`` (a stage's script, the simulator):
    each holds a path as long as the checkout's, which the screen cannot shorten."""
    monkeypatch.chdir(where)
    stages = ("design", "generate", "judge", "audit", "analyze", "verify", "plan")
    return (*(stage_command(stage) for stage in stages), hints.simulator_command())


def _whole_command(line: str, heads: tuple[str, ...]) -> bool:
    """A line that is one command and nothing else: a head, then its arguments, as the shell
    reads them (pasted as printed)."""
    text = line.strip()
    return any(text == head or text.startswith(head + " ") for head in heads) and (
        shlex.join(shlex.split(text)) == text
    )


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_make_demos_result_on_a_terminal_fits_its_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """Every line of the result fits the terminal but a command to paste, whole on a line of
    its own (it names this checkout's scripts, in a folder of any length)."""
    text = _demo_on_a_terminal(tmp_path, columns)
    result = text[text.index("blindtest: triangle test") :]
    assert "every file in demo/" in result  # the demo's last line, after bt-verify
    heads = _command_heads(tmp_path, monkeypatch)
    lines = result.splitlines()
    commands = [line for line in lines if _whole_command(line, heads)]
    assert any(hints.SIMULATOR_URL in line for line in commands)  # the next design, whole
    assert f"    {hints.simulator_command()}" in lines  # how to start the simulator it names
    width = min(columns - 1, screen.PROSE_CAP)
    assert [line for line in lines if len(line) > width and line not in commands] == []
    assert "Channels open (differences the judge could have used):" in result
