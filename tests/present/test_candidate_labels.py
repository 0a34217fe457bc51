"""A candidate's ``label`` from a sides file names it in the report: report.json's
``candidates.shown``, the screen's ranking and sides, and the page's ranking table, charts and
sides table. The label's words go to identity stripping whole: a label holding markup
(``</script>``) is never split at its slash into a term that eats part of every echoed tag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from blindtest.model.identity import design_terms, identity_config, strip_identity
from blindtest.rundir import artifacts

from candidate_analysis_runs import (
    STRENGTHS,
    candidate_design,
    strength_picks,
    write_candidate_run,
)
from report_runs import cli, write_picks

LABELS = {"alpha": "prompt v2", "beta": "</script>", "gamma": "gamma"}


def _labelled(tmp_path: Path) -> tuple[dict[str, Any], str, str]:
    design: Any = candidate_design(prompts=12)
    for name, label in LABELS.items():
        design["models"][name]["label"] = label
    run = write_candidate_run(tmp_path, design)
    loaded = artifacts.load_design(run).design
    write_picks(run / artifacts.PICKS, strength_picks(loaded, STRENGTHS))
    page = tmp_path / "page.html"
    result = cli("analyze", run, "--html", page)
    assert result.exit_code in (0, 1), result.output
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    return dict(report), result.stdout, page.read_text()


def test_a_label_from_a_sides_file_names_the_candidate_in_report_json(tmp_path: Path) -> None:
    report, _, _ = _labelled(tmp_path)
    assert report["candidates"]["shown"] == {
        "alpha": "alpha (prompt v2)",
        "beta": "beta (</script>)",
        "gamma": "gamma",  # a label that says the name again adds nothing
        "delta": "delta",  # no label
    }


def test_the_screen_and_the_page_call_a_candidate_by_its_label(tmp_path: Path) -> None:
    _, screen, page = _labelled(tmp_path)
    ranking = screen[screen.index("Ranking: strength") :].splitlines()
    head = next(n for n, line in enumerate(ranking) if line.split()[:2] == ["rank", "candidate"])
    assert ranking[head + 1].split()[:4] == ["1", "alpha", "(prompt", "v2)"]  # the table
    assert "  alpha (prompt v2): model-alpha" in screen  # the sides, after the reveal
    # The page: the ranking table, both charts and the sides table, the label escaped.
    assert page.count("alpha (prompt v2)") >= 3
    assert "beta (&lt;/script&gt;)" in page
    assert "</script>" not in page
    assert "<script" not in page


def test_a_label_goes_to_identity_stripping_whole() -> None:
    terms = design_terms(["</script>", "prompt v2", "meta-llama/Llama-3.1-8B", "org/name v2"])
    # A model path gives its tail too; a label with markup or a space is a name only whole.
    assert terms == [
        "</script>",
        "prompt v2",
        "meta-llama/Llama-3.1-8B",
        "Llama-3.1-8B",
        "org/name v2",
    ]
    record = identity_config(True, [], ["</script>", "model-x"])
    text, _ = strip_identity("Close it with </script> and the script tag is done.", record)
    assert "</[redacted]" not in text
    assert "script tag" in text
