"""The prompts an LLM judge gets (spec 003's blind A/B evaluation prompt, and its triangle and
pair forms): the bundled templates (package data ``blindtest/data/judge_*.txt``), a user's
``--judge-template`` checked for its square-bracket placeholders, and the messages for one
comparison. ``judge_preference.txt`` is copied word for word from the product description this
project grew from (spec 003, "the LLM-judge prompt"); the triangle and pair forms are ours, in
its discipline.

Pure: the templates are read from the package, a user's template arrives as text; no network,
no click. Filling is one pass, so an output that itself holds ``[OUTPUT_B]`` is never filled in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from blindtest.errors import BadInput
from blindtest.transport.wire import ChatMessage

__all__ = [
    "PREFERENCE_PLACEHOLDERS",
    "REQUIRED_PREFERENCE",
    "JudgeTemplate",
    "bundled",
    "fill",
    "input_context",
    "pair_messages",
    "parse_template",
    "preference_messages",
    "triangle_messages",
]

PLACEHOLDER = re.compile(r"\[([A-Z][A-Z0-9_]*)\]")
#: The placeholders of spec 003's preference prompt.
PREFERENCE_PLACEHOLDERS = (
    "EVALUATION_CRITERIA",
    "OUTPUT_A",
    "OUTPUT_B",
    "INPUT_CONTEXT",
    "SOURCE_MATERIAL",
    "CONSTRAINTS",
)
#: Without these a preference prompt shows the judge nothing to compare.
REQUIRED_PREFERENCE = ("OUTPUT_A", "OUTPUT_B", "INPUT_CONTEXT")

DEFAULT_CRITERIA = (
    "{question}\n"
    "- Accuracy: the output is correct and does not invent facts.\n"
    "- Helpfulness: the output does what the input asks, completely.\n"
    "- Clarity: the output is easy to read and no longer than it needs to be."
)
DEFAULT_SOURCE = "None provided."
DEFAULT_CONSTRAINTS = "None."


@cache
def bundled(name: str) -> str:
    """The bundled template ``judge_<name>.txt`` (preference, triangle, pair_system, pair_trial)."""
    return (resources.files("blindtest") / "data" / f"judge_{name}.txt").read_text("utf-8")


@dataclass(frozen=True, slots=True)
class JudgeTemplate:
    """A preference template: its text and where it came from (for messages)."""

    text: str
    source: str = "the bundled prompt"


def parse_template(text: str, where: str) -> JudgeTemplate:
    """Check a ``--judge-template``: only spec 003's placeholders, and the required ones present;
    raise :class:`BadInput` naming the line of an unknown one."""
    for number, line in enumerate(text.splitlines(), start=1):
        for found in PLACEHOLDER.finditer(line):
            if found.group(1) not in PREFERENCE_PLACEHOLDERS:
                raise BadInput(
                    f"{where}:{number}: unknown placeholder [{found.group(1)}]; use "
                    f"{', '.join(f'[{p}]' for p in PREFERENCE_PLACEHOLDERS)}"
                )
    present = {m.group(1) for m in PLACEHOLDER.finditer(text)}
    missing = [p for p in REQUIRED_PREFERENCE if p not in present]
    if missing:
        raise BadInput(
            f"{where}: the template has no {', '.join(f'[{p}]' for p in missing)}; a judge "
            "prompt must show both outputs and the input they answer"
        )
    return JudgeTemplate(text, where)


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace every ``[NAME]`` of ``values`` in one pass (unknown brackets stay as written)."""

    def one(found: re.Match[str]) -> str:
        return values.get(found.group(1), found.group(0))

    return PLACEHOLDER.sub(one, template)


def input_context(prompt: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """What ``[INPUT_CONTEXT]`` holds: the prompt as written, or for a conversation every turn
    under a heading naming its number and role, the last one (``prompt``, the user's) marked as
    the one the outputs answer. The turns are the prompt file's, the same for every side and
    every output, so nothing here depends on which side is which. Headings are level 3: the
    templates' own sections (``## OUTPUT A``, ``## INPUT CONTEXT``) stay the only level 2."""
    if not history:
        return prompt
    turns = [*history, ("user", prompt)]
    parts = [f"A conversation of {len(turns)} turns; the outputs answer its last turn, the user's."]
    for number, (role, content) in enumerate(turns, start=1):
        last = ", the turn the outputs answer" if number == len(turns) else ""
        parts.append(f"### Turn {number} ({role}){last}\n{content}")
    return "\n\n".join(parts)


def preference_messages(
    template: JudgeTemplate | None,
    *,
    question: str,
    prompt: str,
    output_a: str,
    output_b: str,
    criteria: str | None = None,
    source: str | None = None,
    constraints: str | None = None,
) -> list[ChatMessage]:
    """One preference comparison as chat messages (one user turn)."""
    text = template.text if template is not None else bundled("preference")
    values = {
        "EVALUATION_CRITERIA": criteria or DEFAULT_CRITERIA.format(question=question),
        "OUTPUT_A": output_a,
        "OUTPUT_B": output_b,
        "INPUT_CONTEXT": prompt,
        "SOURCE_MATERIAL": source or DEFAULT_SOURCE,
        "CONSTRAINTS": constraints or DEFAULT_CONSTRAINTS,
    }
    return [{"role": "user", "content": fill(text, values)}]


def triangle_messages(prompt: str, options: Sequence[str]) -> list[ChatMessage]:
    """One triangle trial as chat messages."""
    values = {f"OUTPUT_{i}": text for i, text in enumerate(options, start=1)}
    values["INPUT_CONTEXT"] = prompt
    return [{"role": "user", "content": fill(bundled("triangle"), values)}]


def pair_turn(number: int, prompt: str, options: Sequence[str]) -> ChatMessage:
    """One pair trial as the user turn of the running conversation."""
    values = {"TRIAL_NUMBER": str(number), "INPUT_CONTEXT": prompt}
    values.update({f"OUTPUT_{i}": text for i, text in enumerate(options, start=1)})
    return {"role": "user", "content": fill(bundled("pair_trial"), values)}


def pair_messages(
    history: Sequence[tuple[ChatMessage, str]], turn: ChatMessage
) -> list[ChatMessage]:
    """The pair conversation: the instructions, every earlier trial with the judge's own answer,
    then this trial."""
    messages: list[ChatMessage] = [{"role": "system", "content": bundled("pair_system")}]
    for asked, answered in history:
        messages.append(asked)
        messages.append({"role": "assistant", "content": answered})
    messages.append(turn)
    return messages


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token, as OpenAI's rule of thumb); used only to
    refuse a pair transcript that cannot fit before any call is made."""
    return len(text) // 4 + 1
