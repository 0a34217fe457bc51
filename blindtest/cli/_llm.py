"""bt-judge's options for ``--judge llm:MODEL`` (they arrive in the command as ``**llm``), and
turning them into the stage's :class:`~blindtest.judging.stage.LlmSettings`; the judge itself
is :mod:`blindtest.judging.llm.judge`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from blindtest.cli._options import FilePath, grouped
from blindtest.errors import BadInput
from blindtest.judging.llm.options import DEFAULT_URL
from blindtest.transport.retry import DEFAULT_POLICY

if TYPE_CHECKING:
    from blindtest.judging.stage import LlmSettings

_OPTIONS = [
    click.option("--judge-url", metavar="URL", help=f"LLM judge base URL [default: {DEFAULT_URL}]"),
    click.option(
        "--judge-key-env",
        metavar="NAME",
        help="Variable holding the LLM judge's key [default: BLINDTEST_JUDGE_KEY, then "
        "OPENAI_API_KEY].",
    ),
    click.option(
        "--judge-temperature",
        type=click.FloatRange(0, 2),
        default=0.0,
        show_default=True,
        help="LLM judge sampling temperature.",
    ),
    click.option(
        "--judge-template",
        metavar="FILE",
        type=FilePath(exists=True),
        help="Your own preference prompt, with the [PLACEHOLDERS] the bundled one uses.",
    ),
    click.option(
        "--concurrency",
        type=click.IntRange(min=1),
        default=8,
        show_default=True,
        help="LLM judge: requests in flight.",
    ),
    click.option(
        "--rpm",
        type=click.FloatRange(min=0, min_open=True),
        help="LLM judge: cap on requests started per minute.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=120.0,
        show_default=True,
        help="LLM judge: seconds to wait for a connection and for each read.",
    ),
    click.option(
        "--max-retries",
        type=click.IntRange(min=0),
        default=DEFAULT_POLICY.max_retries,
        show_default=True,
        help="LLM judge: retries per request on 429, 5xx, timeouts, resets.",
    ),
    click.option("--price", metavar="IN,OUT", help="LLM judge price, dollars per million tokens."),
    click.option(
        "--swap/--no-swap",
        default=True,
        show_default=True,
        help="Preference: judge every comparison twice, positions exchanged.",
    ),
    click.option(
        "--inconsistent",
        type=click.Choice(["tie", "exclude"]),
        default="tie",
        show_default=True,
        help="Preference: a comparison whose two passes disagree counts as a tie, or is excluded.",
    ),
    click.option(
        "--min-confidence",
        type=float,
        default=0.7,
        show_default=True,
        help="A verdict less confident than this is flagged for review (preference: and "
        "counts as a tie).",
    ),
    click.option(
        "--judge-context-tokens",
        type=click.IntRange(min=1),
        default=128_000,
        show_default=True,
        help="Pair: the judge model's context window (the whole transcript must fit).",
    ),
    click.option(
        "--show-prompt",
        metavar="N",
        type=click.IntRange(min=1),
        help="Print the prompt the LLM judge gets for trial N, call nothing, write nothing.",
    ),
]
#: The LLM judge's options, as one group.
options = grouped(*_OPTIONS)

_NAMES = [
    "judge_url",
    "judge_key_env",
    "judge_temperature",
    "judge_template",
    "concurrency",
    "rpm",
    "timeout",
    "max_retries",
    "price",
    "swap",
    "inconsistent",
    "min_confidence",
    "judge_context_tokens",
    "show_prompt",
]


def given(ctx: click.Context, llm: dict[str, Any]) -> list[str]:
    """The LLM options given on the command line (refused for a judge that is not an LLM)."""
    source = click.core.ParameterSource.COMMANDLINE
    return [
        "--" + name.replace("_", "-")
        for name in _NAMES
        if name in llm and ctx.get_parameter_source(name) is source
    ]


def settings(ctx: click.Context, kind: str, llm: dict[str, Any]) -> LlmSettings | None:
    """The LLM judge's settings for ``--judge llm:MODEL`` (checked by the stage); its options
    are refused for any other judge."""
    if kind.startswith("llm:"):
        from blindtest.judging.stage import LlmSettings

        return LlmSettings(
            url=llm["judge_url"],
            key_env=llm["judge_key_env"],
            temperature=llm["judge_temperature"],
            template=llm["judge_template"],
            concurrency=llm["concurrency"],
            rpm=llm["rpm"],
            timeout=llm["timeout"],
            max_retries=llm["max_retries"],
            price=llm["price"],
            swap=llm["swap"],
            inconsistent=llm["inconsistent"],
            min_confidence=llm["min_confidence"],
            context_tokens=llm["judge_context_tokens"],
        )
    named = given(ctx, llm)
    if named:
        raise BadInput(f"{', '.join(named)}: only for --judge llm:MODEL")
    return None


def show_prompt(run_dir: Path, kind: str, chosen: LlmSettings, trial: int) -> None:
    """``--show-prompt N``: print the prompt the LLM judge gets for trial N; nothing else
    happens (no call, no file, no lock)."""
    from blindtest.judging.llm.messages import show_prompt as prompt_text
    from blindtest.judging.stage import llm_options
    from blindtest.model.picks import load_judge_run

    _, options = llm_options(kind, chosen)
    click.echo(prompt_text(load_judge_run(run_dir), options, trial))


def resume_args(kind: str, llm: dict[str, Any], ctx: click.Context) -> list[str | Path]:
    """What a rerun of this LLM judge needs on its command line: the kind and the options
    given (never --show-prompt)."""
    args: list[str | Path] = ["--judge", kind]
    for flag in given(ctx, llm):
        name = flag[2:].replace("-", "_")
        value = llm[name]
        if name == "show_prompt":
            continue
        if isinstance(value, bool):
            args.append(flag if value else "--no-" + flag[2:])
        else:
            args += [flag, value if isinstance(value, Path) else str(value)]
    return args
