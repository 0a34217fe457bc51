"""Identity stripping: remove model names, vendor and family names, version
strings and self-identification phrases from the text a judge sees, replacing each with one
neutral token, the same whichever side wrote it. Pure apart from reading the bundled word list
and, for bt-design, the word-list file a user gives (:func:`read_terms_file`).

The terms are data (``blindtest/data/identity_words.txt``, extended by
``bt-design --strip-identity-words FILE``, plus both sides' model names and labels); the design
records the final list, the token and ``IDENTITY_VERSION`` (the matching rules below) under
``normalization.identity_strip``, and :func:`strip_identity` applies that record.

Matching rules (``IDENTITY_VERSION``; change the tag when any of them change):

* case-insensitive, whole words only: a term matches where no letter, digit or underscore
  touches it on either side ("Claude" is not stripped inside "Claudette");
* a space in a term matches any run of whitespace; an apostrophe matches ``'`` and ``’``; and
  ``I'm`` also matches ``I am``;
* a version tail after a term goes with it: ``-4o-mini-2024-07-18``, ``-3-5-sonnet-20241022``,
  `` 3.1 70B``, ``2.5-72B-Instruct``, `` Pro``, ``:8b``. After a hyphen, underscore or colon
  (Ollama's tags) any run starting
  with a digit (or a letter then a digit: ``-V3``, ``-R1``) or a known qualifier (mini, pro,
  sonnet, instruct, ...) is taken; after a space only a short number (three digits at most
  before any point, so "GPT 2023" keeps its year) or a qualifier; with no separator only a
  number right after a letter ("Qwen2.5", "gpt4");
* where terms overlap the longest wins; a term written ``!phrase`` is an exception, matched
  like the others and left as it is ("Claude Shannon" survives "Claude");
* the tokens of neighbouring mentions separated only by spaces merge into one ("I am an AI
  developed by OpenAI" becomes one token, counted as two mentions).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from blindtest.errors import BadInput, option

__all__ = [
    "DEFAULT_TOKEN",
    "IDENTITY_VERSION",
    "builtin_terms",
    "design_terms",
    "final_terms",
    "identity_config",
    "parse_terms",
    "read_terms_file",
    "strip_identity",
    "stripped_total",
]

IDENTITY_VERSION = "blindtest/identity@1"
DEFAULT_TOKEN = "[redacted]"
#: Design terms shorter than this are left out: a one-letter label ("A") would strip every "a".
MIN_TERM_CHARS = 2
EXCEPTION = "!"

_QUALIFIERS = (
    "mini|nano|turbo|pro|flash|ultra|sonnet|opus|haiku|instant|instruct|chat|preview|latest|"
    "lite|plus|max|coder|vision|large|medium|small|tiny|nemo|thinking|reasoner|distill|exp|hf"
)
_NUMBER = r"\d+(?:\.\d+)*[a-z0-9]*"
_LETTER_VERSION = r"[a-z]\d+(?:\.\d+)*[a-z0-9]*"
_SHORT_NUMBER = r"\d{1,3}(?:\.\d+)*(?:[a-z][a-z0-9]*)?"
_TAIL = (
    r"(?:"
    rf"[-_:](?:{_NUMBER}|{_LETTER_VERSION}|(?:{_QUALIFIERS})(?![a-z0-9]))"
    rf"|[ \t](?:{_SHORT_NUMBER}|{_LETTER_VERSION}|(?:{_QUALIFIERS})(?![a-z0-9]))"
    rf"|(?<=[a-z]){_NUMBER}"
    r"|\.\d+"
    r")*"
)


def _key(term: str) -> str:
    """What two spellings of one term share: case, runs of spaces, curly apostrophes and
    "I am" / "I'm" do not count."""
    key = re.sub(r"\s+", " ", term.strip().casefold().replace("’", "'"))
    return re.sub(r"\bi am\b", "i'm", key)


_END = ""
#: How each token of a term matches (any other token is one character, matched as itself).
_TOKENS = {" ": r"\s+", "'": r"['’]", "I'M": r"i(?:['’]m|\s+am)"}


def _tokens(term: str) -> list[str]:
    out: list[str] = []
    for word in term.split():
        if out:
            out.append(" ")
        if word.casefold().replace("’", "'") == "i'm":
            out.append("I'M")
            continue
        out.extend("'" if char in "'’" else char.casefold() for char in word)
    return out


def _trie_pattern(terms: Iterable[str]) -> str:
    """One regex for every term, as a trie: a position is tested once per character, not once
    per term (a plain alternation of ~120 terms made stripping the slowest step of a large
    run). Where a term ends inside a longer one, the longer is tried first (greedy ``?``), so
    the longest match wins, as with an alternation sorted longest first."""
    root: dict[str, Any] = {}
    for term in terms:
        node = root
        for token in _tokens(term):
            node = node.setdefault(token, {})
        node[_END] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [
            _TOKENS.get(token, re.escape(token)) + emit(child)
            for token, child in sorted(node.items())
            if token != _END
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if _END in node else body

    return emit(root)


class _Stripper:
    def __init__(self, terms: Sequence[str], token: str) -> None:
        self.token = token
        self.canonical: dict[str, str] = {}
        self.kept: set[str] = set()
        for term in terms:
            plain = term[1:] if term.startswith(EXCEPTION) else term
            self.canonical[_key(plain)] = plain
            if term.startswith(EXCEPTION):
                self.kept.add(_key(plain))
        pattern = _trie_pattern(self.canonical.values())
        self.regex = (
            re.compile(rf"(?<!\w)({pattern})({_TAIL})(?!\w)", re.IGNORECASE) if pattern else None
        )
        escaped = re.escape(token)
        self.merge = re.compile(rf"{escaped}(?:[ \t]+{escaped})+")

    def strip(self, text: str) -> tuple[str, dict[str, int]]:
        if self.regex is None:
            return text, {}
        counts: Counter[str] = Counter()

        def replace(match: re.Match[str]) -> str:
            key = _key(match.group(1))
            if key in self.kept:
                return match.group(0)
            counts[self.canonical.get(key, match.group(1))] += 1
            return self.token

        stripped = self.regex.sub(replace, text)
        if not counts:
            return text, {}
        return self.merge.sub(self.token, stripped), dict(sorted(counts.items()))


@lru_cache(maxsize=8)
def _stripper(terms: tuple[str, ...], token: str) -> _Stripper:
    return _Stripper(terms, token)


def strip_identity(text: str, record: Mapping[str, Any] | None) -> tuple[str, dict[str, int]]:
    """``text`` with every term of the design's ``identity_strip`` record replaced by its
    token, and the count per term (empty when nothing matched). A missing record (a design
    made before identity stripping) or a disabled one changes nothing."""
    if not record or not record.get("enabled"):
        return text, {}
    return _stripper(tuple(record["terms"]), str(record["token"])).strip(text)


# --------------------------------------------------------------------------- the term list


def parse_terms(text: str) -> list[str]:
    """The terms of a word-list file: one a line, ``#`` comment lines and blank lines skipped.
    ValueError naming the line for a term that could not work (no letter or digit, shorter
    than two characters, a control character)."""
    terms = []
    for number, line in enumerate(text.splitlines(), start=1):
        term = line.strip()
        if not term or term.startswith("#"):
            continue
        plain = term[1:].strip() if term.startswith(EXCEPTION) else term
        if any(ord(char) < 32 for char in plain):
            raise ValueError(f"line {number}: a control character in {term!r}")
        if not any(char.isalnum() for char in plain):
            raise ValueError(f"line {number}: {term!r} has no letter or digit to match")
        if len(plain) < MIN_TERM_CHARS:
            raise ValueError(
                f"line {number}: {term!r} is shorter than {MIN_TERM_CHARS} characters "
                "(it would strip ordinary words)"
            )
        terms.append(EXCEPTION + plain if term.startswith(EXCEPTION) else term)
    return terms


@lru_cache(maxsize=1)
def _builtin() -> tuple[str, ...]:
    data = resources.files("blindtest") / "data" / "identity_words.txt"
    return tuple(parse_terms(data.read_text("utf-8")))


def builtin_terms() -> list[str]:
    """The bundled word list."""
    return list(_builtin())


#: A model name with its organisation (``meta-llama/Llama-3.1-8B``, ``openrouter/x/y``): no
#: space and no markup, so its last part is a model's name too. A label ("prompt v2", or
#: one holding markup such as ``</script>``) is a name only whole: split at its slash, its
#: tail (``script>``) would strip that text out of every answer that writes the tag.
_MODEL_PATH = re.compile(r"[\w.:+-]+(?:/[\w.:+-]+)+")


def design_terms(names: Iterable[str]) -> list[str]:
    """Model names and labels as terms: each name, and for ``org/model`` names
    (``_MODEL_PATH``) the model part too; names shorter than two characters left out."""
    out = []
    for name in names:
        whole = name.strip()
        parts = (whole, whole.rsplit("/", 1)[-1]) if _MODEL_PATH.fullmatch(whole) else (whole,)
        for term in parts:
            if len(term) >= MIN_TERM_CHARS and any(c.isalnum() for c in term) and term not in out:
                out.append(term)
    return out


def final_terms(*sources: Iterable[str]) -> list[str]:
    """One list from several, a later source's entry replacing an earlier one for the same term
    (so a user's ``!Gemini`` overrides the built-in ``Gemini``), longest first."""
    chosen: dict[str, str] = {}
    for source in sources:
        for term in source:
            plain = term[1:] if term.startswith(EXCEPTION) else term
            chosen[_key(plain)] = term
    return sorted(chosen.values(), key=lambda t: (-len(t.lstrip(EXCEPTION)), _key(t), t))


def identity_config(enabled: bool, extra: Sequence[str], names: Iterable[str]) -> dict[str, Any]:
    """The design's ``normalization.identity_strip`` record."""
    terms = final_terms(builtin_terms(), design_terms(names), extra) if enabled else []
    return {
        "enabled": enabled,
        "terms": terms,
        "token": DEFAULT_TOKEN,
        "version": IDENTITY_VERSION,
    }


def added_terms(record: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """The entries of a design's ``identity_strip`` record beyond the bundled word list and
    the sides' ``names``: what ``--strip-identity-words`` added (terms and ``!`` exceptions),
    in the record's order; empty when it added nothing or stripping is off. (A term the bundled
    list of this blindtest no longer holds counts as added: it was a term of the run.)"""
    if not record.get("enabled"):
        return []
    without = set(final_terms(builtin_terms(), design_terms(names)))
    return [term for term in record["terms"] if term not in without]


def stripped_total(rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(mentions replaced, responses touched) over rows carrying ``identity_stripped``."""
    mentions = responses = 0
    for row in rows:
        counts = row.get("identity_stripped") or {}
        if counts:
            responses += 1
            mentions += sum(counts.values())
    return mentions, responses


def read_terms_file(path: Path, name: str = "strip_identity_words") -> list[str]:
    """The terms of a user's word-list file (the one read this module does); BadInput naming
    the option (``name``), the file and the line for anything that would not work."""
    where = option(name, path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise BadInput(f"{where}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{where}: a directory; give a text file, one term a line") from None
    except UnicodeDecodeError:
        raise BadInput(f"{where}: not UTF-8 text; save it as UTF-8") from None
    except OSError as error:
        raise BadInput(f"{where}: cannot read it ({error.strerror})") from None
    try:
        terms = parse_terms(text)
    except ValueError as error:
        raise BadInput(f"{where}: {error}; fix or remove that line") from None
    if not terms:
        raise BadInput(f"{where}: no term in it (one a line, # starts a comment)")
    return terms
