"""Parse prompt files into prompt records, with errors that name the line or byte.

Accepted formats:

* ``.txt``: one prompt per line; blank lines and lines starting with ``#`` are ignored.
* ``.jsonl``: one object per line, ``{"prompt": "...", "id": "...", "tags": [...],
  "reference": "...", "check": {...}, "criteria": "...", "source": "...", "constraints":
  "..."}``; only ``prompt`` is required. ``criteria``, ``source`` (also spelled
  ``source_material``, after spec 003's placeholder) and ``constraints`` are what an LLM judge
  is told about the prompt (kept in the design as ``criteria``, ``source``, ``constraints``).
  Instead of ``prompt``, a record may carry ``messages``: a conversation, a list of
  ``{"role": "user" | "assistant", "content": "..."}`` ending with a user turn; the sides
  answer that last turn, and the judge sees every turn.

A conversation's hash and its duplicate check cover every turn (role and text).

Prompts get ids ``p001``, ``p002``, ... in file order unless the JSONL gives one. Two prompts
that are equal after Unicode NFC normalization, dropping zero-width characters (U+200B..U+200D,
U+2060, U+FEFF) and collapsing whitespace are refused: a repeated prompt would make two trials
dependent, and an invisible difference is no difference to a judge. A NUL byte in a prompt is
refused outright. A ``.txt`` file whose lines are JSON objects is refused with a hint to name it
``.jsonl`` (read as text, every object would become a literal prompt).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from blindtest.errors import BadInput, option

_ALLOWED_FIELDS = (
    "check",
    "constraints",
    "criteria",
    "id",
    "messages",
    "prompt",
    "reference",
    "source",
    "source_material",
    "tags",
)
#: What an LLM judge is told about a prompt (spec 003's placeholders), kept in the design.
JUDGE_FIELDS = ("criteria", "source", "constraints")
#: Roles a conversation's turns may have (system prompts are side options: --system).
ROLES = ("user", "assistant")
_CHECK_KINDS = ("command", "equals", "regex")
_WHITESPACE = re.compile(r"\s+")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")
DEMO_SOURCE = "demo"


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    text: str
    line: int
    tags: tuple[str, ...] = ()
    reference: str | None = None
    check: dict[str, str] | None = field(default=None)
    #: True when the id was given by position (p001, ...), not written in the file.
    generated_id: bool = False
    #: A conversation's turns before the last user turn (``text``), as (role, content).
    history: tuple[tuple[str, str], ...] = ()
    #: For an LLM judge: evaluation criteria, source material, constraints.
    criteria: str | None = None
    source: str | None = None
    constraints: str | None = None

    def messages(self) -> list[dict[str, str]]:
        """The whole conversation, the last user turn included."""
        turns = [{"role": role, "content": content} for role, content in self.history]
        return [*turns, {"role": "user", "content": self.text}]


def conversation_sha256(messages: list[dict[str, str]]) -> str:
    """SHA-256 of a conversation: its turns as compact JSON (keys sorted), UTF-8."""
    data = orjson.dumps(
        [{"role": m["role"], "content": m["content"]} for m in messages],
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(data).hexdigest()


def prompt_sha256(record: dict[str, Any]) -> str:
    """The hash a design records for a prompt record: over the whole conversation when it has
    ``messages``, else over the text (UTF-8)."""
    if "messages" in record:
        return conversation_sha256(record["messages"])
    return hashlib.sha256(record["text"].encode("utf-8")).hexdigest()


def _normalized(text: str) -> str:
    """The text a duplicate check compares: NFC, no zero-width characters, single spaces."""
    text = _ZERO_WIDTH.sub("", unicodedata.normalize("NFC", text))
    return _WHITESPACE.sub(" ", text).strip()


def decode_utf8(data: bytes, where: str) -> str:
    """Decode UTF-8 (a leading BOM is dropped), naming the byte offset and line of bad bytes."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise BadInput(
            f"{where}: not UTF-8: byte 0x{data[error.start]:02x} at offset {error.start} "
            f"(line {line}); save the file as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


def _json_object(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def parse_txt(text: str, where: str) -> list[Prompt]:
    prompts: list[Prompt] = []
    objects: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        record = _json_object(stripped)
        if record is not None:
            objects.append(record)
        prompts.append(
            Prompt(id=f"p{len(prompts) + 1:03d}", text=stripped, line=number, generated_id=True)
        )
    if objects and (len(objects) == len(prompts) or any("prompt" in o for o in objects)):
        first = next(p for p in prompts if _json_object(p.text) is not None)
        raise BadInput(
            f"{where}: line {first.line} is a JSON object, and a .txt file takes each line as a "
            "literal prompt; if these are JSONL records, rename the file to .jsonl"
        )
    return prompts


def _string_field(record: dict[str, Any], key: str, where: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f'{where}: "{key}" must be a non-empty string')
    return value


def _check_field(record: dict[str, Any], where: str) -> dict[str, str] | None:
    check = record.get("check")
    if check is None:
        return None
    valid = (
        isinstance(check, dict)
        and len(check) == 1
        and next(iter(check)) in _CHECK_KINDS
        and isinstance(next(iter(check.values())), str)
    )
    if not valid:
        raise BadInput(
            f'{where}: "check" must be one of {{"regex": ...}}, {{"equals": ...}}, '
            '{"command": ...} with a string value'
        )
    if "regex" in check:
        try:
            re.compile(check["regex"])
        except re.error as error:
            raise BadInput(f"{where}: check regex does not compile: {error}") from None
    return dict(check)


def _jsonl_record(line: str, number: int, where: str) -> Prompt:
    here = f"{where}:{number}"
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as error:
        raise BadInput(f"{here}: not valid JSON ({error})") from None
    if not isinstance(record, dict):
        raise BadInput(f'{here}: expected an object like {{"prompt": "..."}}')
    unknown = sorted(set(record) - set(_ALLOWED_FIELDS))
    if unknown:
        raise BadInput(
            f"{here}: unknown field {unknown[0]!r}; allowed: {', '.join(_ALLOWED_FIELDS)}"
        )
    history: list[tuple[str, str]] = []
    if "messages" in record:
        if "prompt" in record:
            raise BadInput(f'{here}: give "prompt" or "messages", not both')
        history, text = _conversation(record["messages"], here)
    else:
        given = _string_field(record, "prompt", here)
        if given is None:
            raise BadInput(f'{here}: missing "prompt" (or "messages", a conversation)')
        text = given
    tags = record.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise BadInput(f'{here}: "tags" must be a list of non-empty strings')
    return Prompt(
        id=_string_field(record, "id", here) or "",
        text=text.strip() if not history else text,
        line=number,
        tags=tuple(tags),
        reference=_string_field(record, "reference", here),
        check=_check_field(record, here),
        history=tuple(history),
        criteria=_string_field(record, "criteria", here),
        source=_source_field(record, here),
        constraints=_string_field(record, "constraints", here),
    )


def _source_field(record: dict[str, Any], where: str) -> str | None:
    """``source``, or its spelling after spec 003's placeholder, ``source_material``."""
    if "source" in record and "source_material" in record:
        raise BadInput(f'{where}: give "source" or "source_material" (the same field), not both')
    name = "source_material" if "source_material" in record else "source"
    return _string_field(record, name, where)


def _conversation(messages: Any, here: str) -> tuple[list[tuple[str, str]], str]:
    """A conversation checked (a list of {role, content}, roles user/assistant, no empty
    content, ending with a user turn): the earlier turns as (role, content), and the last
    turn's text."""
    if not isinstance(messages, list) or not messages:
        raise BadInput(f'{here}: "messages" must be a non-empty list of {{"role", "content"}}')
    turns: list[tuple[str, str]] = []
    for index, turn in enumerate(messages, start=1):
        if not isinstance(turn, dict) or set(turn) != {"role", "content"}:
            raise BadInput(
                f'{here}: turn {index} must be an object with exactly "role" and "content"'
            )
        role, content = turn["role"], turn["content"]
        if role not in ROLES:
            raise BadInput(
                f"{here}: turn {index} has unknown role {role!r}; use user or assistant "
                f"(a system prompt is a side option: {option('system')}, {option('a_system')})"
            )
        if not isinstance(content, str) or not content.strip():
            raise BadInput(f"{here}: turn {index} ({role}) has empty content")
        turns.append((role, content))
    if turns[-1][0] != "user":
        raise BadInput(
            f"{here}: the conversation ends with an {turns[-1][0]} turn; the last turn must be "
            "the user's (the sides answer it)"
        )
    return turns[:-1], turns[-1][1]


def parse_jsonl(text: str, where: str) -> list[Prompt]:
    prompts: list[Prompt] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        prompt = _jsonl_record(line, number, where)
        if not prompt.id:
            prompt = replace(prompt, id=f"p{len(prompts) + 1:03d}", generated_id=True)
        prompts.append(prompt)
    return prompts


def check_unique(prompts: list[Prompt], where: str) -> None:
    """Refuse repeated prompts (after whitespace normalization) and repeated ids."""
    seen_text: dict[str, Prompt] = {}
    seen_id: dict[str, Prompt] = {}
    for prompt in prompts:
        if any("\x00" in text for text in (prompt.text, *(t for _, t in prompt.history))):
            raise BadInput(
                f"{where}: line {prompt.line} holds a NUL byte (\\x00); remove it "
                "(servers and terminals cut text at a NUL)"
            )
        key = _normalized(prompt.text)
        if prompt.history:  # a conversation: every turn, with its role, is compared
            key = "\x00".join(f"{role}:{_normalized(text)}" for role, text in prompt.history)
            key += f"\x00user:{_normalized(prompt.text)}"
        if key in seen_text:
            first = seen_text[key]
            how = (
                ""
                if first.text == prompt.text
                else " (they differ only in spacing, invisible characters or Unicode composition)"
            )
            raise BadInput(
                f"{where}: line {prompt.line} repeats the prompt on line {first.line}{how}; "
                "each prompt may be used in one trial only"
            )
        if prompt.id in seen_id:
            raise BadInput(_reused_id(where, seen_id[prompt.id], prompt))
        seen_text[key] = prompt
        seen_id[prompt.id] = prompt


def _reused_id(where: str, first: Prompt, prompt: Prompt) -> str:
    if not (first.generated_id or prompt.generated_id):
        return f"{where}: line {prompt.line} reuses id {prompt.id!r} from line {first.line}"
    given, generated = (first, prompt) if prompt.generated_id else (prompt, first)
    return (
        f"{where}: line {given.line} gives id {prompt.id!r}, which line {generated.line} got "
        f"by default (a line without an id gets p001, p002, ... in order); give every line "
        'an explicit "id"'
    )


def parse_prompts(data: bytes, where: str, *, kind: str) -> list[Prompt]:
    """Parse prompt file bytes; ``kind`` is ``"txt"`` or ``"jsonl"``."""
    text = decode_utf8(data, where)
    prompts = parse_jsonl(text, where) if kind == "jsonl" else parse_txt(text, where)
    if not prompts:
        raise BadInput(f"{where}: no prompts found (blank lines and # comments are ignored)")
    check_unique(prompts, where)
    return prompts


def load_prompts(path: Path) -> list[Prompt]:
    """Load a ``.txt`` or ``.jsonl`` prompts file."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise BadInput(f"{path} is a directory; give a .txt or .jsonl file")
    if suffix not in (".txt", ".jsonl"):
        raise BadInput(
            f"{path}: unsupported prompts file type {suffix or '(none)'!r}; "
            "use .txt (one prompt per line) or .jsonl"
        )
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, expected a prompts file") from None
    return parse_prompts(data, str(path), kind=suffix.lstrip("."))


def demo_prompts() -> list[Prompt]:
    """The bundled generic engineering prompts used by ``--demo``."""
    data = resources.files("blindtest").joinpath("data/demo_prompts.txt").read_bytes()
    return parse_prompts(data, DEMO_SOURCE, kind="txt")
