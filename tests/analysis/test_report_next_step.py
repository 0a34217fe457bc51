"""What the report suggests next follows the result: a channel "can explain" only a positive
result (session 2's note: an inconclusive preference was told "formatting can explain this
result")."""

from __future__ import annotations

from typing import Any, cast

import orjson

from blindtest.analysis.tells import CENSUS_FIGURES
from blindtest.analysis.wording import next_step
from blindtest.present.page import sections
from blindtest.rundir.types import DesignRecord


def _design() -> DesignRecord:
    side = {"model": "m", "base_url": "http://127.0.0.1:1/v1"}
    return cast(
        DesignRecord,
        {
            "protocol": "preference",
            "models": {"A": {**side, "model": "big"}, "B": {**side, "model": "small"}},
            "normalization": {
                "length_band": None,
                "truncate_match": False,
                "strip_formatting": False,
                "launder": None,
            },
            "demo": False,
            "alpha": 0.05,
            "sequential": False,
            "similarity_pd0": None,
            "trials": 40,
            "seed": "s",
        },
    )


def _fields(verdict: str) -> dict[str, Any]:
    census = {
        "A": {**{f: 5.0 for f in CENSUS_FIGURES}, "mean_words": 300.0},
        "B": {**{f: 0.0 for f in CENSUS_FIGURES}, "mean_words": 120.0},
    }
    sentences = ["A length bot explains it."]
    return {"verdict": verdict, "audit": {"census": census, "sentences": sentences}, "pd": {}}


def test_next_step_inconclusive_preference_is_not_explained_by_formatting() -> None:
    step = next_step(_design(), _fields("inconclusive"))
    assert step is not None
    assert step["stage"] == "plan"
    assert "explain" not in step["why"]


def test_next_step_a_preferred_side_names_the_channels_to_close() -> None:
    step = next_step(_design(), _fields("A (big) preferred"))
    assert step is not None
    assert step["stage"] == "design"
    assert "--strip-formatting" in step["args"]
    assert step["why"].startswith("length and formatting can explain this result")


def test_all_ties_technical_line_says_the_win_rate_is_undefined_not_a_question_mark() -> None:
    from blindtest.present.render_preference import _technical_lines

    report: Any = {
        "protocol": "preference",
        "verdict": "inconclusive",
        "n": 12,
        "wins": 0,
        "losses": 0,
        "ties": 12,
        "pc": {"estimate": None, "lo": 0.0, "hi": 1.0},
    }
    lines = _technical_lines(report)
    assert lines[-1] == "  A's win rate  undefined: no untied comparison"
    assert not any("?" in line for line in lines)


def test_void_line_of_an_llm_judge_gives_the_judge_command_that_resumes(
    invoke: Any, simulator: Any, tmp_path: Any
) -> None:
    """An unfinished run judged by an LLM judge: the "finish with" line is a bt-judge command
    for that judge (not a person's session), and says where its URL pointed."""
    from llm_runs import llm, make_run

    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=6)
    out = run / "picks-llm.jsonl"
    judged = llm(invoke, run, "sim-judge-fair", "--out", out, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:4]))  # two of six comparisons (two passes each)
    analyzed = invoke("analyze", run, "--picks", out)
    assert analyzed.exit_code == 1, analyzed.output
    origin = simulator.base_url.rsplit("/", 1)[0]
    said, command = analyzed.stderr.rstrip("\n").rsplit("\n", 1)
    assert said.replace("\n", " ").endswith(
        f"finish with (with the --judge-url at {origin} it ran with):"
    )
    assert command.endswith(f"bt-judge {run} --out {out} --judge llm:sim-judge-fair")


def test_a_question_nobody_answered_says_so() -> None:
    from blindtest.analysis.answers import answers_summary

    design: Any = {"judging": {"extra_questions": ["Is it correct?"]}}
    (entry,) = answers_summary(design, [])
    assert entry["statement"] == (
        "'Is it correct?', asked once per comparison (of neither response alone): no answers "
        "(the judges of these picks were not asked it)."
    )


def test_next_step_after_the_demo_names_a_simulator_and_says_how_to_start_it(
    invoke: Any, tmp_path: Any
) -> None:
    from blindtest.present.hints import SIMULATOR_URL, placeholder_legend, setup_command

    design = cast(DesignRecord, {**_design(), "protocol": "triangle", "demo": True})
    step = next_step(design, _fields("distinguished"))
    assert step is not None
    args = [str(a) for a in step["args"]]
    # The demo's own simulator (a port it picked) is gone: a fixed one is named instead.
    assert args[args.index("--a-url") + 1] == SIMULATOR_URL
    assert args[args.index("--b-url") + 1] == SIMULATOR_URL
    assert "127.0.0.1:1/" not in " ".join(args)
    assert placeholder_legend(args) == "(NEW-RUN: a new run directory)"
    assert setup_command(args).endswith("python -m blindtest.simulator --port 8000")
    shown = sections.next_step({"next": step}) or {}  # the report page: the same two commands
    assert shown["setup"] == setup_command(args)
    assert shown["command"].endswith(" ".join(args))
    # The command as printed makes a design that sends its requests there.
    run = tmp_path / "new-run"
    result = invoke("design", *[str(run) if a == "NEW-RUN" else a for a in args])
    assert result.exit_code == 0, result.stderr
    written = orjson.loads((run / "design.json").read_bytes())
    assert {side["base_url"] for side in written["models"].values()} == {SIMULATOR_URL}
