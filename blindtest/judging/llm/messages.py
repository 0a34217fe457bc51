"""The messages an LLM judge sends for one comparison (spec 003's prompt filled for the trial, the
positions swapped for pass 2, a pair judge's conversation), ``--show-prompt``, and the run
checked against them before anything is asked (the prompt fields a template names, a pair
judge's conversation fitting the context).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.judging.llm import prompts
from blindtest.judging.llm.options import LlmOptions, check_key
from blindtest.model.picks import JudgeRun, Trial
from blindtest.model.protocols import PROTOCOLS
from blindtest.transport.wire import ChatMessage


def check_run(options: LlmOptions, run: JudgeRun, *, key: bool = True) -> None:
    """Everything that can be refused before the first call (exit 2, nothing written);
    ``key``: whether the key is needed (a batch file export or import calls nothing;
    :func:`check_key`)."""
    if key:
        check_key(options)
    protocol = run.view.protocol
    asking = PROTOCOLS[protocol].llm.asking
    if options.template is not None and asking != "passes":
        raise BadInput(f"{option('llm.template')} is for preference runs; this run is {protocol}")
    check_fields(run, options)
    if asking == "conversation":  # the whole transcript is sent with the last trial
        fits, total = _pair_fit(run.view.trials, options.context_tokens)
        if fits < total:
            raise BadInput(
                f"{option('llm.context_tokens', options.context_tokens)}: the pair transcript of "
                f"{reportfmt.count(total, 'trial')} would not fit; only {fits} fit: raise the "
                "limit (the judge "
                "model's context window) or design fewer trials"
            )


#: A prompt record's judge field -> the spec 003 placeholder it fills.
FIELD_PLACEHOLDERS = {
    "criteria": "EVALUATION_CRITERIA",
    "source": "SOURCE_MATERIAL",
    "constraints": "CONSTRAINTS",
}


def prompt_fields(run: JudgeRun) -> dict[int, dict[str, str]]:
    """Trial number -> the criteria, source and constraints its prompt record carries (the
    prompt file's fields, kept in the design). Only the arrangement's ``prompt_id`` is read:
    nothing here depends on which side is which."""
    by_id = {
        str(p["id"]): {name: str(p[name]) for name in FIELD_PLACEHOLDERS if name in p}
        for p in run.design["prompts"]
    }
    return {
        int(entry["trial"]): by_id.get(str(entry["prompt_id"]), {})
        for entry in run.design["arrangement"]
    }


def check_fields(run: JudgeRun, options: LlmOptions) -> None:
    """Preference: a field the prompt file gives for some prompts is required of every
    judged prompt (a prompt without it would be judged by a different prompt: exit 2 naming
    its id), and the template must show it (a ``--judge-template`` without the placeholder
    would hide it from the judge). A field no prompt carries falls back to the defaults."""
    if PROTOCOLS[run.view.protocol].llm.asking != "passes":  # only its template has fields
        return
    text = options.template.text if options.template is not None else prompts.bundled("preference")
    used = {m.group(1) for m in prompts.PLACEHOLDER.finditer(text)}
    where = options.template.source if options.template is not None else "the bundled prompt"
    fields = prompt_fields(run)
    ids = {int(e["trial"]): str(e["prompt_id"]) for e in run.design["arrangement"]}
    for name, placeholder in FIELD_PLACEHOLDERS.items():
        carried = [n for n in sorted(fields) if name in fields[n]]
        if not carried:
            continue
        if placeholder not in used:
            raise BadInput(
                f"{where}: the prompts carry {name!r} but the template has no "
                f"[{placeholder}]; add it, or the judge never sees it"
            )
        lacking = sorted({ids[n] for n in fields if name not in fields[n]})
        if lacking:
            shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
            raise BadInput(
                f"prompt {shown}: no {name!r}, which the prompts of {len(carried)} "
                f'trials carry; give every prompt a {name!r} in the prompt file (e.g. "None.") '
                "and design the run again"
            )


_ANSWER_TOKENS = 200  # what a pair verdict adds to the transcript, generously


def _pair_fit(trials: Sequence[Trial], limit: int) -> tuple[int, int]:
    used = prompts.estimate_tokens(prompts.bundled("pair_system"))
    for count, trial in enumerate(trials):
        turn = prompts.pair_turn(trial.number, input_context(trial), trial.options)
        used += prompts.estimate_tokens(turn["content"]) + _ANSWER_TOKENS
        if used > limit:
            return count, len(trials)
    return len(trials), len(trials)


def _mapping(swapped: bool) -> dict[str, str]:
    return {"A": "right", "B": "left"} if swapped else {"A": "left", "B": "right"}


def input_context(trial: Trial) -> str:
    """The trial's ``[INPUT_CONTEXT]``: its prompt, or its whole conversation, every turn
    role-labelled (:func:`blindtest.judging.llm.prompts.input_context`); the same for every pass."""
    return prompts.input_context(trial.prompt, trial.history)


def comparison_messages(
    run: JudgeRun,
    options: LlmOptions,
    trial: Trial,
    swapped: bool = False,
    fields: Mapping[str, str] | None = None,
) -> list[ChatMessage]:
    """The messages of one (preference: one pass of one) comparison; pair: its first turn.
    ``fields``: the trial's prompt fields (:func:`prompt_fields`; looked up when None)."""
    asking = PROTOCOLS[run.view.protocol].llm.asking
    if asking == "passes":
        first, second = trial.options if not swapped else trial.options[::-1]
        given = prompt_fields(run).get(trial.number, {}) if fields is None else fields
        return prompts.preference_messages(
            options.template,
            question=run.view.question,
            prompt=input_context(trial),
            output_a=first,
            output_b=second,
            criteria=given.get("criteria"),
            source=given.get("source"),
            constraints=given.get("constraints"),
        )
    if asking == "alone":
        return prompts.triangle_messages(input_context(trial), trial.options)
    turn = prompts.pair_turn(trial.number, input_context(trial), trial.options)
    return prompts.pair_messages([], turn)


def show_prompt(run: JudgeRun, options: LlmOptions, number: int) -> str:
    """The messages the judge gets for trial ``number`` (pass 1), as text; nothing is called."""
    if not 1 <= number <= run.view.total:
        raise BadInput(f"{option('show_prompt', number)}: this run has trials 1..{run.view.total}")
    check_fields(run, options)
    messages = comparison_messages(run, options, run.view.trials[number - 1])
    return "\n\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages)
