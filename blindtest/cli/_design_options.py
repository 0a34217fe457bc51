"""The design options, word for word the same for ``bt-design`` and ``blindtest run`` (one
group, so they can never drift apart): where the prompts come from, then everything after the
model names."""

from __future__ import annotations

from typing import Any

import click

from blindtest.cli._options import FilePath, alpha_option, grouped
from blindtest.model.protocols import (  # not blindtest.designing.build: bt-generate never loads it
    DEFAULT_PROTOCOL,
    PROTOCOLS,
)
from blindtest.transport.addresses import DEFAULT_BASE_URL


class GreedyOption(click.Option):
    """An option that takes every argument after it up to the next option (``--from-dirs
    a b c``): each is one value of a ``multiple`` option, so ``--from-dirs a --from-dirs b``
    means the same."""

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            option = parser._long_opt.get(name) or parser._short_opt.get(name)
            if option is None:
                continue
            single = option.process

            def greedy(value: Any, state: Any, single: Any = single) -> None:
                single(value, state)
                while state.rargs and not str(state.rargs[0]).startswith("-"):
                    single(state.rargs.pop(0), state)

            option.process = greedy


# The design options, shared by bt-design and `blindtest run` (which takes the models as
# arguments): where the prompts come from, then everything after the model names.
prompt_source_options = grouped(
    click.option(
        "--prompts",
        "prompts_file",
        type=FilePath(dir_okay=True),
        metavar="FILE",
        help='Prompts: .txt (one per line) or .jsonl ({"prompt": ...}).',
    ),
    click.option("--demo", is_flag=True, help="Use the bundled generic engineering prompts."),
)
design_options = grouped(
    click.option(
        "--a-url", metavar="URL", help=f"Base URL for side A [default: {DEFAULT_BASE_URL}]."
    ),
    click.option(
        "--b-url", metavar="URL", help=f"Base URL for side B [default: {DEFAULT_BASE_URL}]."
    ),
    click.option(
        "--a-key-env",
        metavar="NAME",
        help="NAME of the env variable holding A's key [default: BLINDTEST_A_KEY if set, "
        "else OPENAI_API_KEY].",
    ),
    click.option("--b-key-env", metavar="NAME", help="Same for side B (BLINDTEST_B_KEY)."),
    click.option(
        "--temperature",
        type=float,
        default=1.0,
        show_default=True,
        help="Sampling temperature for both sides.",
    ),
    click.option("--max-tokens", type=click.IntRange(min=1), help="Token limit per response."),
    click.option("--system", metavar="TEXT|@FILE", help="System prompt, the same for both sides."),
    *(
        option
        for side in ("a", "b")
        for option in (
            click.option(
                f"--{side}-system",
                metavar="TEXT|@FILE",
                help=f"System prompt for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-template",
                metavar="TEXT",
                help=f"Side {side.upper()}'s user message, with {{prompt}} where the prompt goes.",
            ),
            click.option(
                f"--{side}-temperature",
                type=float,
                help=f"Temperature for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-max-tokens",
                type=click.IntRange(min=1),
                help=f"Token limit for side {side.upper()} only.",
            ),
            click.option(
                f"--{side}-param",
                metavar="KEY=VALUE",
                multiple=True,
                help=f"Extra request field for side {side.upper()} (JSON value; null removes "
                "it; repeatable).",
            ),
            click.option(
                f"--{side}-label",
                metavar="NAME",
                help=f"What the report calls side {side.upper()} [default: the model].",
            ),
        )
    ),
    click.option(
        "--protocol",
        type=click.Choice(tuple(PROTOCOLS)),
        help="triangle: the judge picks the odd one of three (two from one model); pair: the "
        "judge tells which of two is which model; preference: the judge says which of two is "
        f"better [default: {DEFAULT_PROTOCOL}; with candidates: preference, the only one].",
    ),
    click.option(
        "--trials",
        type=int,
        help="Number of trials [default: 20; with candidates every comparison --pairs gives, "
        "and --trials caps it].",
    ),
    click.option(
        "--controls",
        type=int,
        default=0,
        metavar="K",
        help="Preference: add K hidden controls (one model on both sides) among the trials.",
    ),
    click.option(
        "--people-sample",
        type=int,
        metavar="N",
        help="Preference: people judge N prompts drawn from the seed (every comparison of "
        "each), an LLM judge every prompt; the report estimates what people prefer.",
    ),
    click.option(
        "--people-sample-by",
        type=click.Choice(("tag",)),
        help="With --people-sample: draw within each prompt's first tag (stratified).",
    ),
    click.option(
        "--judge-prediction",
        type=click.Choice(("verdict", "confidence")),
        help="With --people-sample: the LLM judge's prediction of a comparison, its verdict or "
        "its verdict weighed by its stated confidence [default: verdict].",
    ),
    click.option(
        "--people-missing",
        type=click.Choice(("void", "bound")),
        help="With --people-sample: a sampled comparison people leave unjudged voids the "
        "estimate, or bounds it by the worst case [default: void].",
    ),
    click.option("--seed", type=str, help="Arrangement seed (default: fresh, recorded)."),
    alpha_option,
    click.option(
        "--sequential",
        is_flag=True,
        help="Pre-register the right to stop early (triangle e-process; with a preference "
        "--decide, an anytime-valid confidence sequence).",
    ),
    click.option(
        "--similarity",
        "similarity_pd0",
        type=float,
        metavar="PD0",
        help="Pre-register a similarity claim: pd < PD0.",
    ),
    click.option(
        "--position-margin",
        "position_margin",
        type=float,
        metavar="M",
        help="Preference: fix the position gate's margin on the left share before any pick: "
        "the run fails when the share is shown beyond 1/2 +- M [default: 0.05].",
    ),
    click.option(
        "--decide",
        metavar="RULE",
        help="Pre-register a decision: noninferior:MARGIN, superior or equivalent:MARGIN "
        "(preference: the challenger's share of untied comparisons; 0.05 = at least 45%), "
        "similar:PD0 (triangle, pair). Exit 0 shown, 4 refuted, 5 not settled.",
    ),
    click.option(
        "--champion",
        metavar="NAME",
        help="With --decide: the side every other is decided against (A, B, a candidate, or "
        "its label or model) [default: A; with --pairs reference:NAME, NAME; with candidates, "
        "the first].",
    ),
    click.option(
        "--estimand",
        type=click.Choice(("untied-share", "mean-score")),
        help="With --decide: the challenger's share of untied comparisons, or its mean score "
        "with a tie as half a win [default: untied-share; with --people-sample, always the "
        "people's mean score, estimated by prediction-powered inference].",
    ),
    click.option(
        "--plan-true",
        type=float,
        metavar="SHARE",
        help="With --decide (not --people-sample, planned at the values observed): the "
        "challenger's true share to plan the settling n at [default: 0.5; superior 0.6; "
        "similar: the planning pd, 0].",
    ),
    click.option(
        "--plan-ties",
        type=float,
        metavar="RATE",
        help="With --decide (not --people-sample): the expected tie rate to plan at [default: 0].",
    ),
    click.option(
        "--sensitivity",
        type=int,
        default=0,
        metavar="N",
        help="With --decide: plant N comparisons of the champion's answer against a degraded "
        "copy of it; non-inferiority and equivalence need the judge to prefer the original.",
    ),
    click.option("--strip-formatting", is_flag=True, help="Flatten markdown and typography."),
    click.option("--length-band", metavar="LO..HI", help="Ask both models for LO..HI words."),
    click.option(
        "--truncate-match", is_flag=True, help="Cut responses to the shortest in a trial."
    ),
    click.option(
        "--strip-identity/--no-strip-identity",
        default=True,
        help="Replace model names and self-identification in what the judge sees with one "
        "token [default: on].",
    ),
    click.option(
        "--strip-identity-words",
        type=FilePath(dir_okay=True),
        metavar="FILE",
        help="More terms to strip: one a line, # comments, !TERM keeps TERM.",
    ),
    click.option("--launder", metavar="MODEL", help="Rewrite every response with MODEL."),
    click.option(
        "--launder-url",
        metavar="URL",
        help=f"Base URL of the laundering model (with --launder) [default: {DEFAULT_BASE_URL}].",
    ),
    click.option(
        "--launder-key-env",
        metavar="NAME",
        help="NAME of the laundering key variable (with --launder).",
    ),
    click.option("--question", metavar="TEXT", help="The question put to the judge."),
    click.option(
        "--ask",
        "extra_questions",
        metavar="TEXT",
        multiple=True,
        help="An extra yes/no question asked once per comparison (preference only; repeatable).",
    ),
    click.option(
        "--ask-each",
        "extra_questions_per_option",
        metavar="TEXT",
        multiple=True,
        help="An extra yes/no question asked of each of the two options (preference only; "
        "repeatable).",
    ),
    click.option(
        "--reason/--no-reason",
        "require_reason",
        default=None,
        help="Require a one-line reason per pick [default: only for preference].",
    ),
    click.option(
        "--from-dirs",
        "from_dirs",
        cls=GreedyOption,
        multiple=True,
        type=FilePath(dir_okay=True),
        metavar="DIR...",
        help="Import outputs from candidate directories instead of calling models: two are "
        "sides A and B; three or more (or two with --pairs) are candidates named by their "
        "directories.",
    ),
    click.option(
        "--reference",
        type=FilePath(dir_okay=True),
        metavar="DIR",
        help="With --from-dirs: a directory of reference files shown as the prompts.",
    ),
)

# bt-design only: several candidates (`blindtest run` takes two models as its arguments).
candidate_options = grouped(
    click.option(
        "--candidate",
        metavar="NAME=MODEL",
        multiple=True,
        help="A candidate of a several-candidate design (repeat for each, 2 to 20); the shared "
        "--temperature, --max-tokens, --system, --url and --key-env apply to all.",
    ),
    click.option(
        "--sides",
        type=FilePath(),
        metavar="FILE",
        help="Every candidate as a full side configuration, in one .json or .toml file "
        "(docs/formats.md).",
    ),
    click.option(
        "--pairs",
        metavar="MODE",
        help="With candidates, who meets whom: all (every pair on every prompt), reference:NAME "
        "(each against NAME) or sample:M (M pairs per prompt) [default: all].",
    ),
    click.option(
        "--url", metavar="URL", help=f"Base URL of every candidate [default: {DEFAULT_BASE_URL}]."
    ),
    click.option(
        "--key-env",
        metavar="NAME",
        help="NAME of the env variable holding every candidate's key [default: as --a-key-env].",
    ),
)
