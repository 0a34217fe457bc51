"""``bt-judge RUN --judge llm:MODEL --check``: the LLM judge's endpoint checked as the sides'
are (:mod:`blindtest.preflight`): its key variable, URL, model, the longest comparison it will
be sent against the context the server reports, its parameters (``response_format``: a
refusal is a note, the judge then asks in plain text) and the cost. Reads the blinded view
only; writes nothing."""

from __future__ import annotations

from collections.abc import Sequence

from blindtest.generation.wire import ChatMessage
from blindtest.judging.llm import prompts
from blindtest.judging.llm.judge import LlmOptions, comparison_messages, response_format
from blindtest.judging.picks import JudgeRun
from blindtest.preflight import CHECK_PROMPT, Target
from blindtest.prompt_size import estimated_tokens

__all__ = ["JUDGE_ANSWER_TOKENS", "judge_target"]

#: Output tokens assumed per comparison for the cost estimate (a JSON verdict with its
#: justification).
JUDGE_ANSWER_TOKENS = 400


def _tokens(messages: Sequence[ChatMessage]) -> int:
    return estimated_tokens("\n".join(str(m["content"]) for m in messages))


def _requests(run: JudgeRun, options: LlmOptions) -> list[int]:
    """Estimated input tokens of every request the judge makes (a pair run's transcript
    grows: each request holds every earlier turn)."""
    trials = run.view.trials
    protocol = run.view.protocol
    if protocol == "pair":
        system = _tokens([{"role": "system", "content": prompts.bundled("pair_system")}])
        sizes, running = [], system
        for trial in trials:
            turn = prompts.pair_turn(
                trial.number, prompts.input_context(trial.prompt, trial.history), trial.options
            )
            running += _tokens([turn]) + JUDGE_ANSWER_TOKENS
            sizes.append(running)
        return sizes
    passes = 2 if protocol == "preference" and options.swap else 1
    sizes = [_tokens(comparison_messages(run, options, trial)) for trial in trials]
    return sizes * passes


def judge_target(run: JudgeRun, options: LlmOptions) -> Target:
    """The LLM judge as a :class:`~blindtest.preflight.Target`."""
    endpoint = options.endpoint()
    sizes = _requests(run, options)
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
        price_option="--price",
        response_format=response_format(run.view.protocol),
        format_optional=True,
    )
