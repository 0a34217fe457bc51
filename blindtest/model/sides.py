"""Each side a full configuration: what one side sends (its system prompt, its
user-message template, its extra request parameters) and how the two sides differ.

Pure functions over the design document (``design.json`` as a dict) and option values; the
only file it reads is an ``@FILE`` option value. It never opens a socket.

A side's configuration lives in ``design["models"][side]``: ``model``, ``base_url``,
``key_env``, ``params`` (sampling: temperature, max_tokens, top_p) and, when given,
``label``, ``system`` (overrides the design's shared ``system``), ``template`` (a
user-message template holding ``{prompt}``) and ``extra_params`` (request-body fields set
last; ``null`` removes a field).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput
from blindtest.model.candidates import candidates_of, has_side_options

SIDES = ("A", "B")
#: ``{name}`` in a template; ``{prompt}`` is the only one there is.
PLACEHOLDER = re.compile(r"\{(\w*)\}")
#: Body fields a parameter may not set: blindtest owns them.
RESERVED_PARAMS = frozenset({"model", "messages", "stream", "n"})
#: The openai SDK's request option whose fields go into the body itself, at its top level
#: (``client.chat.completions.create(..., extra_body={...})`` merges them over the rest).
EXTRA_BODY = "extra_body"
#: A value starting like a JSON object, array or string is meant as JSON: one that does not
#: parse is a typing mistake, never a string to send.
_JSON_STARTS = ("{", "[", '"')


def read_text_option(option: str, value: str) -> str:
    """The option's text, or the content of FILE for ``@FILE`` (BadInput naming the option)."""
    if not value.startswith("@"):
        return value
    path = Path(value[1:])
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{option}: {path} does not exist; give TEXT or @FILE") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"{option}: cannot read {path}: {error}") from None
    text = text.rstrip("\n")
    if not text.strip():
        raise BadInput(f"{option}: {path} is empty")
    return text


def check_template(option: str, template: str) -> None:
    """A template must hold ``{prompt}``, and no other placeholder."""
    names = PLACEHOLDER.findall(template)
    other = next((name for name in names if name != "prompt"), None)
    if other is not None:
        raise BadInput(
            f"{option}: unknown placeholder {{{other}}}; the only placeholder is {{prompt}}"
        )
    if "prompt" not in names:
        raise BadInput(f"{option}: the template has no {{prompt}}; write where the prompt goes")


def fill_template(template: str | None, prompt: str) -> str:
    """The user message: ``prompt`` itself, or the template with ``{prompt}`` replaced."""
    return prompt if template is None else template.replace("{prompt}", prompt)


def parse_param(option: str, item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> (key, value): VALUE parsed as JSON when it is JSON (``0.9``,
    ``true``, ``{"a": 1}``, ``null`` to remove the field), else kept as a string; a VALUE
    that starts like JSON (``{``, ``[``, ``"``) and does not parse is refused."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise BadInput(f"{option}: {item!r} is not KEY=VALUE, e.g. {option} top_p=0.9")
    if key in RESERVED_PARAMS:
        raise BadInput(f"{option}: {key!r} is set by blindtest itself and cannot be a parameter")
    try:
        value: Any = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        if raw.lstrip().startswith(_JSON_STARTS):
            raise BadInput(
                f"{option}: {key}={raw} starts like JSON but is not JSON ({error}); quote "
                f"keys and strings as JSON does, e.g. {option} '{key}={{\"top_k\": 20}}'"
            ) from None
        value = raw
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput(f"{option}: {key}={raw} is not a finite number")
    return key, value


def parse_params(option: str, items: Iterable[str]) -> dict[str, Any]:
    """Every ``KEY=VALUE`` of one option (:func:`parse_param`), a later KEY over an earlier
    one; ``extra_body={...}``'s fields are merged into the body's top level over the rest, as
    the openai SDK sends them (never a field named extra_body)."""
    params: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    for item in items:
        key, value = parse_param(option, item)
        if key == EXTRA_BODY:
            merged.update(extra_body_fields(option, value))
        else:
            params[key] = value
    return params | merged


def extra_body_fields(option: str, value: Any) -> dict[str, Any]:
    """The fields of an ``extra_body`` value: a JSON object setting none of blindtest's own."""
    if not isinstance(value, dict):
        shown = orjson.dumps(value).decode()
        raise BadInput(
            f"{option}: {EXTRA_BODY} must be a JSON object of body fields, e.g. "
            f'{EXTRA_BODY}={{"top_k": 20}}; got {shown}'
        )
    reserved = sorted(RESERVED_PARAMS.intersection(value))
    if reserved:
        raise BadInput(f"{option}: {EXTRA_BODY} sets {reserved[0]!r}, which blindtest sets itself")
    return dict(value)


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_header_env(option: str, item: str) -> tuple[str, str]:
    """``NAME:ENVVAR`` -> (header name, variable name); the value is never taken here."""
    name, sep, env = item.partition(":")
    name, env = name.strip(), env.strip()
    if not sep or not _HEADER_NAME.match(name) or not _ENV_NAME.match(env):
        raise BadInput(
            f"{option}: {item!r} is not NAME:ENVVAR (a header name and the NAME of the "
            f"environment variable holding its value), e.g. {option} OpenAI-Organization:ORG_ID"
        )
    if name.lower() in ("authorization", "content-type", "content-length", "host"):
        raise BadInput(f"{option}: blindtest sets the {name} header itself")
    return name, env


# --------------------------------------------------------------------------- reading a design


def side_system(design: Mapping[str, Any], side: str) -> str | None:
    """The side's own system prompt, else the design's shared one (None: no system prompt)."""
    spec = design["models"][side]
    if "system" in spec:
        return spec["system"]  # type: ignore[no-any-return]
    return design.get("system")


def side_label(design: Mapping[str, Any], side: str) -> str:
    spec = design["models"][side]
    return str(spec.get("label") or spec["model"])


def effective_temperature(spec: Mapping[str, Any]) -> float | None:
    """The temperature a side's requests carry (``extra_params`` override the sampling one;
    None: not sent, the server's default)."""
    extra = spec.get("extra_params") or {}
    if "temperature" in extra:
        value = extra["temperature"]
        return float(value) if isinstance(value, int | float) else None
    return (spec.get("params") or {}).get("temperature")


def side_config(design: Mapping[str, Any], side: str) -> dict[str, Any]:
    """The side's full configuration, every field filled (shown after the reveal)."""
    spec = design["models"][side]
    config: dict[str, Any] = {"label": side_label(design, side), "model": spec["model"]}
    if "dir" in spec:
        config["dir"] = spec["dir"]
        return config
    config.update(
        base_url=spec["base_url"],
        key_env=spec["key_env"],
        system=side_system(design, side),
        template=spec.get("template"),
        params=dict(spec.get("params") or {}),
        extra_params=dict(spec.get("extra_params") or {}),
    )
    return config


#: (field, words) in the order a summary names them.
_ASPECTS = (
    ("base_url", "endpoint"),
    ("key_env", "key"),
    ("system", "system prompt"),
    ("template", "template"),
    ("temperature", "temperature"),
    ("max_tokens", "token limit"),
    ("other", "parameters"),
)


def _aspects(config: Mapping[str, Any]) -> dict[str, Any]:
    params = dict(config.get("params") or {})
    extra = dict(config.get("extra_params") or {})
    merged = {**params, **extra}
    return {
        "base_url": config.get("base_url"),
        "key_env": config.get("key_env"),
        "system": config.get("system"),
        "template": config.get("template"),
        "temperature": merged.pop("temperature", None),
        "max_tokens": merged.pop("max_tokens", None),
        "other": {k: v for k, v in merged.items() if v is not None},
    }


def differences(design: Mapping[str, Any]) -> list[str]:
    """What differs between two candidates besides the model, in words ("system prompt")."""
    a, b = (_aspects(side_config(design, side)) for side in candidates_of(design)[:2])
    return [words for key, words in _ASPECTS if a[key] != b[key]]


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _candidate_label(design: Mapping[str, Any], name: str) -> str:
    """A side of a two-sided design by its label (else its model); a named candidate by its
    name, with its model when that differs."""
    if has_side_options(design):
        return side_label(design, name)
    model = str(design["models"][name]["model"])
    return name if model == name else f"{name} ({model})"


def sides_summary(design: Mapping[str, Any]) -> str:
    """One line: two candidates' labels and what differs, e.g. ``v1 vs v2 (same model,
    different system prompt)`` or ``m1 vs m2 (different models)``; from three, the list
    (``3 candidates: a (m1), b (m2), c``)."""
    names = candidates_of(design)
    if len(names) > 2:
        listed = ", ".join(_candidate_label(design, n) for n in names)
        return f"{len(names)} candidates: {listed}"
    first, second = names
    labels = f"{_candidate_label(design, first)} vs {_candidate_label(design, second)}"
    same_model = design["models"][first]["model"] == design["models"][second]["model"]
    others = differences(design)
    if same_model:
        what = "same model, " + (f"different {_join(others)}" if others else "same configuration")
    else:
        what = "different models" + (f", different {_join(others)}" if others else "")
    return f"{labels} ({what})"


def identity_terms(design: Mapping[str, Any]) -> list[str]:
    """Every name that would tell a judge which side wrote a text: every side's model name
    and label (both sides, or every candidate), for identity stripping, longest first, without
    repeats."""
    terms = {
        str(value)
        for spec in design["models"].values()  # A and B, or every candidate
        for value in (spec["model"], spec.get("label"))
        if value
    }
    return sorted(terms, key=lambda term: (-len(term), term))
