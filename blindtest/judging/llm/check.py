"""``bt-judge RUN --judge llm:MODEL --check``: the LLM judge's endpoint checked as the sides'
are (:mod:`blindtest.transport.preflight`): its key variable, URL, model, the longest comparison it
will
be sent against the context the server reports, its parameters (``response_format``: a
refusal is a note, the judge then asks in plain text) and the cost. Reads the blinded view
only; writes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.judging.llm import prompts
from blindtest.judging.llm.messages import comparison_messages
from blindtest.judging.llm.options import LlmOptions
from blindtest.judging.llm.verdicts import response_format
from blindtest.model.picks import JudgeRun
from blindtest.model.prompt_size import estimated_tokens, prompt_text_of
from blindtest.model.protocols import PROTOCOLS
from blindtest.transport.preflight import CHECK_PROMPT, Target
from blindtest.transport.wire import ChatMessage

__all__ = ["JUDGE_ANSWER_TOKENS", "design_judge_target", "judge_target"]

#: An answer's length when its side sets no token cap (bt-generate's cost estimate assumes the
#: same, ``blindtest.generation.cost.ASSUMED_OUTPUT_TOKENS``, a stage this one does not import).
ASSUMED_OUTPUT_TOKENS = 600
#: Output tokens assumed per comparison for the cost estimate (a JSON verdict with its
#: justification).
JUDGE_ANSWER_TOKENS = 400


def _tokens(messages: Sequence[ChatMessage]) -> int:
    return estimated_tokens("\n".join(str(m["content"]) for m in messages))


def _requests(run: JudgeRun, options: LlmOptions) -> list[int]:
    """Estimated input tokens of every request the judge makes (a pair run's transcript
    grows: each request holds every earlier turn)."""
    trials = run.view.trials
    llm = PROTOCOLS[run.view.protocol].llm
    if llm.asking == "conversation":
        system = _tokens([{"role": "system", "content": prompts.bundled("pair_system")}])
        sizes, running = [], system
        for trial in trials:
            turn = prompts.pair_turn(
                trial.number, prompts.input_context(trial.prompt, trial.history), trial.options
            )
            running += _tokens([turn]) + JUDGE_ANSWER_TOKENS
            sizes.append(running)
        return sizes
    passes = 2 if llm.asking == "passes" and options.swap else 1
    sizes = [_tokens(comparison_messages(run, options, trial)) for trial in trials]
    return sizes * passes


def judge_target(run: JudgeRun, options: LlmOptions) -> Target:
    """The LLM judge as a :class:`~blindtest.transport.preflight.Target`, its requests measured on
    the
    blinded trials."""
    return _target(run.view.protocol, _requests(run, options), options)


def design_judge_target(
    design: Mapping[str, Any], options: LlmOptions, price_option: str = ""
) -> Target:
    """The LLM judge before any answer exists (``blindtest run --check``): each comparison
    estimated as its prompt, the bundled template and every option at the sides' token cap
    (:data:`ASSUMED_OUTPUT_TOKENS` without one)."""
    protocol = str(design["protocol"])
    rules = PROTOCOLS[protocol]
    caps = [
        spec.get("params", {}).get("max_tokens") or ASSUMED_OUTPUT_TOKENS
        for spec in design["models"].values()
    ]
    shown = rules.options * max(caps)
    template = estimated_tokens("\n".join(prompts.bundled(name) for name in rules.llm.templates))
    texts = {str(p["id"]): prompt_text_of(p) for p in design["prompts"]}
    sizes = [
        template + estimated_tokens(texts[str(entry["prompt_id"])]) + shown
        for entry in design["arrangement"]
    ]
    if rules.llm.asking == "conversation":
        sizes = [sum(sizes[: k + 1]) + k * JUDGE_ANSWER_TOKENS for k in range(len(sizes))]
    elif rules.llm.asking == "passes" and options.swap:
        sizes = sizes * 2
    return _target(protocol, sizes, options, price_option)


def _target(
    protocol: str, sizes: Sequence[int], options: LlmOptions, price_option: str = "--price"
) -> Target:
    endpoint = options.endpoint()
    estimate: dict[str, float] = {
        "input_tokens": float(sum(sizes)),
        "output_tokens": float(len(sizes) * JUDGE_ANSWER_TOKENS),
    }
    if options.price is not None:
        price_in, price_out = options.price
        estimate["cost"] = (
            estimate["input_tokens"] * price_in + estimate["output_tokens"] * price_out
        ) / 1e6
    return Target(
        role="judge",
        title=f"LLM judge: {options.model} at {endpoint.origin}",
        endpoint=endpoint,
        messages=[{"role": "user", "content": CHECK_PROMPT}],
        longest_tokens=max(sizes, default=0),
        output_tokens=None,
        estimate=estimate,
        price_option=price_option,
        response_format=response_format(protocol),
        format_optional=True,
        longest_name="comparison",
    )
