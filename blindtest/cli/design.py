"""bt-design: prompts and options -> RUN/design.json and RUN/design.sha256. Calls no model."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest import reportfmt
from blindtest.cli import _chain, _design_options, _from
from blindtest.cli._command import command
from blindtest.cli._options import force_option, quiet_option, run_argument
from blindtest.cli._prose import echo_prose

if TYPE_CHECKING:
    from blindtest.designing.build import DesignOptions
    from blindtest.designing.stage import DesignResult


@command("design")
@run_argument
@_design_options.prompt_source_options
@click.option("--a", "model_a", metavar="MODEL", help="Model for side A.")
@click.option("--b", "model_b", metavar="MODEL", help="Model for side B.")
@_design_options.candidate_options
@_design_options.design_options
@_from.options
@force_option
@quiet_option
def design(run_dir: Path, force: bool, quiet: bool, **options: Any) -> None:
    """Write the pre-registered design and its SHA-256. No model is called.

    \b
    Example:
      bt-design run --demo --a gpt-5.4 --b gpt-5.4-mini --seed 7
      bt-design run --prompts prompts.txt --a m1 --b m2 --protocol pair --temperature 0
      bt-design run --from-dirs out/model-a out/model-b --protocol preference --trials 12
      bt-design run --prompts p.txt --candidate fast=m1 --candidate big=m2 --pairs all
      bt-design run --from-dirs out/v1 out/v2 out/v3 out/v4 --pairs sample:2
      bt-design new --from run --drop-trial 7    # without a trial no server answers
    """
    from_run = options.pop("from_run")
    drop_trials, reasons = options.pop("drop_trials"), options.pop("reasons")
    if from_run is not None or drop_trials or reasons:
        _from.derive(run_dir, from_run, drop_trials, reasons, force, quiet)
        return
    from blindtest.designing.stage import design as write_design

    result = write_design(
        run_dir,
        force=force,
        holder=_chain.stage_label(),
        on_dropped=None if quiet else show_dropped,
        **options,
    )
    if not quiet:
        show(result)


def show_dropped(name: str, items: list[str]) -> None:
    """The items a --from-dirs candidate lacks (they leave the design)."""
    shown = ", ".join(items[:8]) + (", ..." if len(items) > 8 else "")
    click.echo(f"dropped {len(items)} item(s) missing from {name}: {shown}", err=True)


def show(result: DesignResult) -> None:
    """The design's summary: what it asks, what the judge sees, and its hash."""
    if result.options.candidates:
        _candidates_summary(result)
        decision = result.options.decision
        if decision is not None:
            from blindtest.designing.decision import decision_line, per_challenger

            each = per_challenger(result.design, decision.champion)
            echo_prose(decision_line(decision, each, result.options.alpha), err=True)
    else:
        _summary(result.options, result.prompts)
    for line in result.warnings:
        echo_prose(line, err=True)
    _people_line(result.design)
    _identity_line(result.design)
    click.echo(f"{result.sha256}  {result.design_path}")


def _people_line(document: Mapping[str, Any]) -> None:
    """Who judges what, when people judge a sample (never which prompts: that is the design's)."""
    from blindtest.model.people_sample import people_sample_words

    words = people_sample_words(document)
    if words:
        echo_prose(words, err=True)


def _identity_line(document: Mapping[str, Any]) -> None:
    """Stripping changes what the judge sees: say so, with the design's own terms (a model
    served as "default" would strip that word from every answer)."""
    from blindtest.model.identity import design_terms
    from blindtest.model.sides import identity_terms

    record = document["normalization"]["identity_strip"]
    if record["enabled"]:
        names = ", ".join(design_terms(identity_terms(document)))
        line = (
            f"identity stripping: {len(record['terms'])} names and phrases become "
            f"{record['token']} for the judge, among them {names}"
        )
    else:
        line = "identity stripping off: model names and self-identification reach the judge"
    echo_prose(line, err=True)


def _summary(options: DesignOptions, prompts: int) -> None:
    from blindtest.planning.rows import weak_design_note

    sequential = options.sequential
    controls = f" + {options.controls} hidden controls" if options.controls else ""
    if options.planted:
        controls += f" + {options.planted} planted comparisons"
    click.echo(
        f"{options.protocol} design: {reportfmt.count(options.trials, 'trial')}{controls} from "
        f"{reportfmt.count(prompts, 'prompt')}, "
        f"seed {reportfmt.seed_shown(options.seed)}, alpha {options.alpha}"
        f"{', sequential' if sequential else ''}",
        err=True,
    )
    if options.decision is not None:  # the decision's own power line replaces the generic one
        from blindtest.designing.decision import decision_line

        echo_prose(decision_line(options.decision, options.trials, options.alpha), err=True)
    elif not sequential and options.similarity_pd0 is None:
        note = weak_design_note(options.protocol, options.trials, options.alpha)
        if note:
            echo_prose(note, err=True)  # wrapped to a terminal, whole into a log


def _candidates_summary(result: DesignResult) -> None:
    """A several-candidate design, before anything is sent: who, who meets whom, how many
    comparisons, and what is paid for (answers per candidate, not per comparison)."""
    from blindtest.designing.candidate_plan import plan_candidates, summary_lines

    options = result.options
    for line, whole in summary_lines(plan_candidates(result.design), options.seed, options.alpha):
        if whole:  # a table row: never wrapped
            click.echo(line, err=True)
        else:
            echo_prose(line, err=True)
