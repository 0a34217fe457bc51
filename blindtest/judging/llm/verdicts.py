"""An LLM judge's verdicts (spec 003): the JSON schema each protocol's verdict follows, the
``response_format`` that asks for it, and reading a reply into a checked verdict (a fenced or bare
JSON object, validated with jsonschema; what is wrong with it, for asking again).

Pure: text in, a verdict or a reason out. No network, no click.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from blindtest.model.protocols import PROTOCOLS, JudgePrompt

if TYPE_CHECKING:
    import jsonschema


#: Spec 003: "cap retries at three attempts before logging a failure and moving on".
VERDICT_RETRIES = 3


_LEAK = {
    "identity_leakage_detected": {"type": "boolean"},
    "identity_leakage_details": {"type": "string"},
}


_COMMON = {
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "justification": {"type": "string"},
    "key_differentiators": {"type": "array", "items": {"type": "string"}},
    **_LEAK,
}


_REQUIRED = ("confidence", "justification", "identity_leakage_detected")


def _verdict_schema(form: JudgePrompt) -> dict[str, Any]:
    """The JSON schema of a protocol's verdict: its own fields around the common ones."""
    return {
        "type": "object",
        "properties": {**form.fields, **_COMMON, **form.after},
        "required": [*form.required, *_REQUIRED],
    }


VERDICT_SCHEMAS: dict[str, dict[str, Any]] = {
    name: _verdict_schema(rules.llm) for name, rules in PROTOCOLS.items()
}


def response_format(protocol: str) -> dict[str, object]:
    return {
        "type": "json_schema",
        "json_schema": {"name": f"{protocol}_verdict", "schema": VERDICT_SCHEMAS[protocol]},
    }


_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def extract_json(text: str) -> object:
    """The JSON object in a model's answer: the whole text, a fenced block, or the outermost
    ``{...}``; raises ValueError when there is none."""
    candidates = [text.strip()]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
    raise ValueError("no JSON object in the answer")


@cache
def _validator(protocol: str) -> jsonschema.Draft202012Validator:
    import jsonschema  # deferred: start-up

    return jsonschema.Draft202012Validator(VERDICT_SCHEMAS[protocol])


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: Per property of :data:`VERDICT_SCHEMAS`: a test true only of values the schema accepts.
_QUICK: dict[str, Callable[[object], bool]] = {
    "preference": lambda v: v in ("A", "B", "TIE") and isinstance(v, str),  # verdict field
    "odd": lambda v: isinstance(v, int) and not isinstance(v, bool) and v in (1, 2, 3),
    "nicknames": lambda v: _strings(v) and len(v) == 2 and all(v),  # type: ignore[arg-type]
    "output_1": lambda v: isinstance(v, str) and bool(v),
    "confidence": lambda v: _number(v) and 0 <= v <= 1,  # type: ignore[operator]
    "justification": lambda v: isinstance(v, str),
    "key_differentiators": _strings,
    "identity_leakage_detected": lambda v: isinstance(v, bool),
    "identity_leakage_details": lambda v: isinstance(v, str),
    "tie_reason": lambda v: v is None or isinstance(v, str),
}


def _quick_valid(protocol: str, value: object) -> bool:
    """True when ``value`` certainly satisfies the protocol's verdict schema (the common case,
    checked in microseconds); False sends it to jsonschema, which decides and explains."""
    if not isinstance(value, dict):
        return False
    schema = VERDICT_SCHEMAS[protocol]
    properties = schema["properties"]
    if any(name not in value for name in schema["required"]):
        return False
    return all(_QUICK[name](item) for name, item in value.items() if name in properties)


def validate_verdict(protocol: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """The verdict in ``text`` and "", or None and why it is not one (jsonschema decides every
    verdict the quick check is not sure of)."""
    try:
        value = extract_json(text)
    except ValueError as error:
        return None, str(error)
    if _quick_valid(protocol, value):
        assert isinstance(value, dict)
        return value, ""
    validator = _validator(protocol)
    from jsonschema.exceptions import best_match

    problem = best_match(validator.iter_errors(value))
    if problem is not None:
        where = "/" + "/".join(str(p) for p in problem.absolute_path)
        return None, f"invalid verdict at {where}: {problem.message}"
    assert isinstance(value, dict)
    return value, ""
