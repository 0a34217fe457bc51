"""``bt-design --sides FILE``: every candidate of a several-candidate design as a full side
configuration, in one JSON or TOML file, in the order written.

Two shapes, either format:

* a table per candidate, keyed by its name (JSON ``{"alpha": {...}, "beta": {...}}``; TOML
  ``[alpha]`` then ``[beta]``);
* a list of tables each holding its ``name`` (JSON ``[{"name": "alpha", ...}]``; TOML
  ``[[candidate]]`` tables, the file's one top-level key).

A candidate's table takes what the two-sided per-side options take, under the names a
design's ``models`` record uses: ``model`` (required), ``base_url`` (or ``url``), ``key_env``,
``system`` (the text itself), ``template``, ``params`` (``temperature``, ``max_tokens``,
``top_p``; ``temperature`` and ``max_tokens`` may also stand at the top of the table),
``extra_params`` (request-body fields, a null removes one) and ``label``. What a table leaves
out comes from the shared options (``--temperature``, ``--max-tokens``, ``--url``,
``--key-env``), as a two-sided side's own options fall back on them. Anything else in a
table is refused by name, so a misspelt key never silently does nothing.

Pure apart from reading the one file; no click.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.sides import RESERVED_PARAMS

__all__ = ["SideEntry", "read_sides_file"]

_KEYS = frozenset(
    {
        "model", "base_url", "url", "key_env", "system", "template", "params", "temperature",
        "max_tokens", "extra_params", "label",
    }
)  # fmt: skip
_PARAMS = frozenset({"temperature", "max_tokens", "top_p"})


@dataclass(frozen=True, slots=True)
class SideEntry:
    """One candidate as the file gives it (None: not given, the shared option applies)."""

    name: str
    model: str
    base_url: str | None = None
    key_env: str | None = None
    system: str | None = None
    template: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    extra_params: tuple[tuple[str, Any], ...] = ()
    label: str | None = None


def _load(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{option('sides', path)}: no such file") from None
    except OSError as error:
        raise BadInput(f"{option('sides', path)}: cannot read it ({error.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{option('sides', path)}: not UTF-8 text") from None
    if path.suffix.lower() == ".toml":
        return _toml(path, text)
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise BadInput(f"{option('sides', path)}: not JSON ({error})") from None
    raise BadInput(f"{option('sides', path)}: name it .json or .toml so its format is known")


def _toml(path: Path, text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise BadInput(f"{option('sides', path)}: not TOML ({error})") from None
    raise BadInput(f"{option('sides', path)}: TOML needs Python 3.11 or later; give JSON")


def _tables(where: str, document: Any) -> list[tuple[str, Any]]:
    """(name, table) in the order written."""
    if isinstance(document, Mapping) and list(document) == ["candidate"]:
        document = document["candidate"]  # TOML's [[candidate]] tables
    if isinstance(document, list):
        out = []
        for number, table in enumerate(document, start=1):
            if not isinstance(table, Mapping) or not isinstance(table.get("name"), str):
                raise BadInput(f'{where}: entry {number} needs a "name" (text) and its settings')
            rest = {key: value for key, value in table.items() if key != "name"}
            out.append((str(table["name"]), rest))
        return out
    if isinstance(document, Mapping):
        return [(str(name), table) for name, table in document.items()]
    raise BadInput(f"{where}: give a table per candidate (keyed by name) or a list of them")


def _number(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadInput(f"{where}: {key} must be a number, got {value!r}")
    return float(value)


def _text(where: str, key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{where}: {key} must be text, got {value!r}")
    return value


def _params(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """temperature, max_tokens and top_p, from ``params`` or the top of the table."""
    params = table.get("params", {})
    if not isinstance(params, Mapping):
        raise BadInput(f"{where}: params must be a table of temperature, max_tokens, top_p")
    odd = sorted(set(params) - _PARAMS)
    if odd:
        raise BadInput(
            f"{where}: params takes temperature, max_tokens and top_p; put {odd[0]!r} in "
            "extra_params"
        )
    for key in ("temperature", "max_tokens"):
        if key in params and key in table:
            raise BadInput(f"{where}: {key} is given twice (at the top and in params)")
    merged = {**params, **{k: table[k] for k in ("temperature", "max_tokens") if k in table}}
    max_tokens = merged.get("max_tokens")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1
    ):
        raise BadInput(f"{where}: max_tokens must be a whole number >= 1, got {max_tokens!r}")
    for key in ("temperature", "top_p"):
        if merged.get(key) is not None:
            merged[key] = _number(where, key, merged[key])
    return merged


def _extra(where: str, table: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    extra = table.get("extra_params", {})
    if not isinstance(extra, Mapping):
        raise BadInput(f"{where}: extra_params must be a table of request-body fields")
    reserved = sorted(RESERVED_PARAMS.intersection(extra))
    if reserved:
        raise BadInput(f"{where}: extra_params sets {reserved[0]!r}, which blindtest sets itself")
    return tuple((str(k), v) for k, v in extra.items())


def _entry(source: str, name: str, table: Any) -> SideEntry:
    where = f"{source}, candidate {name!r}"
    if not isinstance(table, Mapping):
        raise BadInput(f'{where}: give its settings as a table, e.g. {{"model": "..."}}')
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise BadInput(
            f"{where}: unknown key {unknown[0]!r}; a candidate takes {', '.join(sorted(_KEYS))}"
        )
    if "url" in table and "base_url" in table:
        raise BadInput(f"{where}: give base_url or url, not both")
    model = table.get("model")
    if not isinstance(model, str) or not model.strip():
        raise BadInput(f'{where}: needs "model", the model\'s name')
    params = _params(where, table)
    return SideEntry(
        name=name,
        model=model,
        base_url=_text(where, "url", table.get("base_url", table.get("url"))),
        key_env=_text(where, "key_env", table.get("key_env")),
        system=_text(where, "system", table.get("system")),
        template=_text(where, "template", table.get("template")),
        temperature=params.get("temperature"),
        max_tokens=params.get("max_tokens"),
        top_p=params.get("top_p"),
        extra_params=_extra(where, table),
        label=_text(where, "label", table.get("label")),
    )


def read_sides_file(path: Path | list[Any] | Mapping[str, Any]) -> list[SideEntry]:
    """The candidates of a ``--sides`` file (or of the same document already parsed, from
    the Python API), in the order written; BadInput (one line) for anything malformed."""
    if isinstance(path, Path):
        where, document = option("sides", path), _load(path)
    else:
        where, document = "sides", path
    entries = [_entry(where, name, table) for name, table in _tables(where, document)]
    if not entries:
        raise BadInput(f"{where}: names no candidate")
    return entries
