"""bt-design: prompts and options -> RUN/design.json and RUN/design.sha256. Calls no model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from blindtest import artifacts
from blindtest.cli import _common
from blindtest.cli._common import alpha_option, command, force_option, quiet_option, run_argument
from blindtest.design import (
    DEFAULT_BASE_URL,
    DEFAULT_KEY_ENV,
    PROTOCOLS,
    DesignOptions,
    LaunderSpec,
    ModelSpec,
    Normalization,
    build_design,
    check_url,
)
from blindtest.errors import BadInput
from blindtest.normalize import LAUNDER_PROMPT, length_band_instruction, parse_length_band
from blindtest.prompts import Prompt, demo_prompts, load_prompts
from blindtest.provenance import collect_provenance
from blindtest.rng import fresh_seed

#: With --demo and no models named, the design points at the bundled local simulator.
DEMO_MODELS = ("sim-large", "sim-small")
DEMO_BASE_URL = "http://127.0.0.1:8765/v1"


def default_key_env(side: str) -> str:
    """``BLINDTEST_<SIDE>_KEY`` when it is set, else ``OPENAI_API_KEY`` (the name, not the key)."""
    specific = f"BLINDTEST_{side}_KEY"
    return specific if os.environ.get(specific) else DEFAULT_KEY_ENV


def _load(prompts_file: Path | None, demo: bool) -> list[Prompt]:
    if (prompts_file is None) == (not demo):
        raise BadInput("give exactly one of --prompts FILE, --demo or --from-dirs A B")
    return demo_prompts() if demo else load_prompts(prompts_file)  # type: ignore[arg-type]


def _from_dirs(
    dirs: tuple[Path, Path], reference: Path | None, protocol: str, others: list[str], quiet: bool
) -> tuple[list[Prompt], dict[str, Any], tuple[str, str]]:
    """Prompts, the design's source record and the candidate names, from two directories."""
    from blindtest.outputs import check_triangle_variants, load_dirs

    if others:
        raise BadInput(
            f"--from-dirs takes its items and names from the directories; drop {others[0]}"
        )
    source = load_dirs(dirs[0], dirs[1], reference)
    if protocol == "triangle":
        check_triangle_variants(source)
    for name, items in source.dropped.items() if not quiet else ():
        shown = ", ".join(items[:8]) + (", ..." if len(items) > 8 else "")
        click.echo(f"dropped {len(items)} item(s) missing from {name}: {shown}", err=True)
    return source.prompts(), source.record(), (source.a.name, source.b.name)


def _normalization(
    strip_formatting: bool,
    length_band: str | None,
    truncate_match: bool,
    launder: str | None,
    launder_url: str | None,
    launder_key_env: str | None,
) -> Normalization:
    if launder is None and (launder_url is not None or launder_key_env is not None):
        given = "--launder-url" if launder_url is not None else "--launder-key-env"
        raise BadInput(f"{given} goes with --launder MODEL; add --launder or drop {given}")
    band = None
    if length_band is not None:
        try:
            band = parse_length_band(length_band)
        except ValueError as error:
            raise BadInput(f"--length-band: {error}") from None
    spec = None
    if launder is not None:
        launder_url = launder_url or DEFAULT_BASE_URL
        check_url("--launder-url", launder_url)
        spec = LaunderSpec(
            model=launder,
            base_url=launder_url,
            key_env=launder_key_env or default_key_env("LAUNDER"),
            prompt=LAUNDER_PROMPT,
        )
    return Normalization(
        strip_formatting=strip_formatting,
        truncate_match=truncate_match,
        length_band=band,
        length_band_instruction=length_band_instruction(*band) if band else None,
        launder=spec,
    )


@command("design")
@run_argument
@click.option(
    "--prompts",
    "prompts_file",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help='Prompts: .txt (one per line) or .jsonl ({"prompt": ...}).',
)
@click.option("--demo", is_flag=True, help="Use the bundled generic engineering prompts.")
@click.option("--a", "model_a", metavar="MODEL", help="Model for side A.")
@click.option("--b", "model_b", metavar="MODEL", help="Model for side B.")
@click.option("--a-url", metavar="URL", help=f"Base URL for side A [default: {DEFAULT_BASE_URL}].")
@click.option("--b-url", metavar="URL", help=f"Base URL for side B [default: {DEFAULT_BASE_URL}].")
@click.option(
    "--a-key-env",
    metavar="NAME",
    help="NAME of the env variable holding A's key [default: BLINDTEST_A_KEY if set, "
    "else OPENAI_API_KEY].",
)
@click.option("--b-key-env", metavar="NAME", help="Same for side B (BLINDTEST_B_KEY).")
@click.option(
    "--temperature",
    type=float,
    default=1.0,
    show_default=True,
    help="Sampling temperature for both sides.",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Token limit per response.")
@click.option("--system", metavar="TEXT", help="System prompt, the same for both sides.")
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="triangle",
    show_default=True,
    help="triangle: the judge picks the odd one of three (two from one model); pair: the judge "
    "tells which of two is which model; preference: the judge says which of two is better.",
)
@click.option("--trials", type=int, default=20, show_default=True, help="Number of trials.")
@click.option("--seed", type=str, help="Arrangement seed (default: fresh, recorded).")
@alpha_option
@click.option(
    "--sequential", is_flag=True, help="Pre-register the right to stop early (triangle e-process)."
)
@click.option(
    "--similarity",
    "similarity_pd0",
    type=float,
    metavar="PD0",
    help="Pre-register a similarity claim: pd < PD0.",
)
@click.option("--strip-formatting", is_flag=True, help="Flatten markdown and typography.")
@click.option("--length-band", metavar="LO..HI", help="Ask both models for LO..HI words.")
@click.option("--truncate-match", is_flag=True, help="Cut responses to the shortest in a trial.")
@click.option("--launder", metavar="MODEL", help="Rewrite every response with MODEL.")
@click.option(
    "--launder-url",
    metavar="URL",
    help=f"Base URL of the laundering model (with --launder) [default: {DEFAULT_BASE_URL}].",
)
@click.option(
    "--launder-key-env",
    metavar="NAME",
    help="NAME of the laundering key variable (with --launder).",
)
@click.option("--question", metavar="TEXT", help="The question put to the judge.")
@click.option(
    "--ask",
    "extra_questions",
    metavar="TEXT",
    multiple=True,
    help="An extra yes/no question per comparison (preference only; repeatable).",
)
@click.option(
    "--reason/--no-reason",
    "require_reason",
    default=None,
    help="Require a one-line reason per pick [default: only for preference].",
)
@click.option(
    "--from-dirs",
    "from_dirs",
    nargs=2,
    type=click.Path(path_type=Path),
    metavar="DIR_A DIR_B",
    help="Import outputs from two candidate directories instead of calling models.",
)
@click.option(
    "--reference",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="With --from-dirs: a directory of reference files shown as the prompts.",
)
@force_option
@quiet_option
@_common.writes_run
def design(
    run_dir: Path,
    prompts_file: Path | None,
    demo: bool,
    model_a: str | None,
    model_b: str | None,
    a_url: str | None,
    b_url: str | None,
    a_key_env: str | None,
    b_key_env: str | None,
    temperature: float,
    max_tokens: int | None,
    system: str | None,
    protocol: str,
    trials: int,
    seed: str | None,
    alpha: float,
    sequential: bool,
    similarity_pd0: float | None,
    strip_formatting: bool,
    length_band: str | None,
    truncate_match: bool,
    launder: str | None,
    launder_url: str | None,
    launder_key_env: str | None,
    question: str | None,
    extra_questions: tuple[str, ...],
    require_reason: bool | None,
    from_dirs: tuple[Path, Path] | None,
    reference: Path | None,
    force: bool,
    quiet: bool,
) -> None:
    """Write the pre-registered design and its SHA-256. No model is called.

    \b
    Example:
      bt-design run --demo --a gpt-5.4 --b gpt-5.4-mini --seed 7
      bt-design run --prompts prompts.txt --a m1 --b m2 --protocol pair --temperature 0
      bt-design run --from-dirs out/model-a out/model-b --protocol preference --trials 12
    """
    source = None
    if from_dirs:
        given = {"--prompts": prompts_file, "--demo": demo or None, "--a": model_a, "--b": model_b}
        others = [flag for flag, value in given.items() if value is not None]
        prompts, source, (model_a, model_b) = _from_dirs(
            from_dirs, reference, protocol, others, quiet
        )
    elif reference is not None:
        raise BadInput("--reference goes with --from-dirs DIR_A DIR_B")
    if demo and model_a is None and model_b is None:
        model_a, model_b = DEMO_MODELS
        a_url = a_url or DEMO_BASE_URL
        b_url = b_url or DEMO_BASE_URL
    if model_a is None or model_b is None:
        raise BadInput("name both models: --a MODEL --b MODEL")
    if not from_dirs:
        prompts = _load(prompts_file, demo)
    options = DesignOptions(
        a=ModelSpec(
            model_a,
            a_url or DEFAULT_BASE_URL,
            a_key_env or default_key_env("A"),
            temperature,
            max_tokens,
        ),
        b=ModelSpec(
            model_b,
            b_url or DEFAULT_BASE_URL,
            b_key_env or default_key_env("B"),
            temperature,
            max_tokens,
        ),
        seed=seed if seed is not None else fresh_seed(),
        protocol=protocol,
        trials=trials,
        alpha=alpha,
        sequential=sequential,
        similarity_pd0=similarity_pd0,
        demo=demo,
        system=system,
        normalization=_normalization(
            strip_formatting, length_band, truncate_match, launder, launder_url, launder_key_env
        ),
        question=question,
        extra_questions=extra_questions,
        require_reason=require_reason,
        source=source,
    )
    document = build_design(prompts, options, collect_provenance())
    digest = artifacts.write_design(run_dir, document, force=force)
    if quiet:
        return
    click.echo(
        f"{protocol} design: {trials} trials from {len(prompts)} prompts, seed "
        f"{options.seed}, alpha {alpha}{', sequential' if sequential else ''}",
        err=True,
    )
    if not sequential and similarity_pd0 is None:
        from blindtest.plan import weak_design_note

        note = weak_design_note(protocol, trials, alpha)
        if note:
            click.echo(note, err=True)
    click.echo(f"{digest}  {run_dir / artifacts.DESIGN}")
