"""The design's two files: ``design.json`` written with ``design.sha256`` (the hash of its
exact bytes), the same design again resumed, a different one refused naming the first
difference; read back only while the bytes still match the hash.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from blindtest.errors import BadInput, option
from blindtest.rundir.artifacts.atomic import (
    write_bytes_atomic,
)
from blindtest.rundir.artifacts.columns import Columns
from blindtest.rundir.artifacts.documents import (
    _VALID_DOCUMENTS,
    _decode,
    _validate_document,
    read_bytes,
    read_design_hash,
)
from blindtest.rundir.artifacts.encoding import (
    dump_json,
    sha256_bytes,
)
from blindtest.rundir.artifacts.guard import (
    claim_output,
    refuse_overwrite,
)
from blindtest.rundir.artifacts.names import (
    DESIGN,
    DESIGN_HASH,
    DOWNSTREAM_OF_DESIGN,
)
from blindtest.rundir.artifacts.validation import (
    SCHEMA_MAJORS,
    fast_validator,
    tag_major,
    validate,
)
from blindtest.rundir.types import DesignRecord

# --------------------------------------------------------------------------- the design


#: Design fields that record how a design was made, not what it is: a rerun may differ there.
PROVENANCE_FIELDS = ("provenance",)


class DesignDiffers(BadInput):
    """``design.json`` exists and the command asks for a different design."""

    def __init__(self, path: Path, difference: str) -> None:
        super().__init__(
            f"{path} already exists; use {option('force', True)} to overwrite it ({DESIGN} "
            f"differs: {difference})"
        )
        self.path = path
        self.difference = difference


def _shown_value(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 60 else text[:57] + "..."


def _dict_difference(
    recorded: Mapping[str, Any], wanted: Mapping[str, Any], where: str
) -> str | None:
    for key in [*wanted, *(k for k in recorded if k not in wanted)]:
        inner = f"{where}.{key}" if where else str(key)
        if key not in recorded:
            return f"{inner} is not recorded, the command asks for {_shown_value(wanted[key])}"
        if key not in wanted:
            return f"{inner} is {_shown_value(recorded[key])}, the command leaves it out"
        found = _first_difference(recorded[key], wanted[key], inner)
        if found is not None:
            return found
    return None


def _first_difference(recorded: Any, wanted: Any, where: str) -> str | None:
    if isinstance(recorded, dict) and isinstance(wanted, dict):
        return _dict_difference(recorded, wanted, where)
    if isinstance(recorded, list) and isinstance(wanted, list):
        for index, (old, new) in enumerate(zip(recorded, wanted, strict=False)):
            found = _first_difference(old, new, f"{where}[{index}]")
            if found is not None:
                return found
        if len(recorded) != len(wanted):
            return f"{where} has {len(recorded)} entries, the command asks for {len(wanted)}"
        return None
    if recorded == wanted and type(recorded) is type(wanted):
        return None
    return f"{where} is {_shown_value(recorded)}, the command asks for {_shown_value(wanted)}"


def design_difference(recorded: Mapping[str, Any], wanted: Mapping[str, Any]) -> str | None:
    """The first field where two designs differ, in words (``trials is 20, the command asks
    for 30``), ignoring provenance (versions, git state); None when they are the same design."""
    strip = {k: v for k, v in recorded.items() if k not in PROVENANCE_FIELDS}
    want = {k: v for k, v in wanted.items() if k not in PROVENANCE_FIELDS}
    as_json = orjson.loads(dump_json(want))  # compare as JSON: tuples are lists, keys strings
    want = {key: as_json[key] for key in want}  # in the order the design lists its fields
    return _first_difference(strip, want, "")


def write_design(run_dir: Path, design: Mapping[str, Any], *, force: bool = False) -> str:
    """Write ``design.json`` and ``design.sha256`` (the hex SHA-256 of its exact bytes).

    The same design again (provenance aside) writes nothing and returns the recorded hash, so a
    rerun of the same command resumes; a different one is refused with ``DesignDiffers`` naming
    the first difference unless ``force`` (and never once later stages built on the old one).
    """
    design_path = run_dir / DESIGN
    hash_path = run_dir / DESIGN_HASH
    validate(design, "design", DESIGN)
    if design_path.exists():
        claim_output(design_path, "design", force=True)
        try:
            recorded: LoadedDesign | None = load_design(run_dir)
        except BadInput:
            recorded = None
        difference = None if recorded is None else design_difference(recorded.design, design)
        if recorded is not None and difference is None:
            return recorded.sha256
        if not force:
            if difference is not None:
                raise DesignDiffers(design_path, difference)
            refuse_overwrite(design_path, force)
    claim_output(hash_path, "design hash", force=force)
    # --force may replace a design, never one that later stages already built on.
    downstream = [name for name in DOWNSTREAM_OF_DESIGN if (run_dir / name).exists()]
    if downstream:
        raise BadInput(
            f"{run_dir} already holds {downstream[0]} made from the current design; "
            "use a new run directory"
        )
    data = dump_json(design)
    digest = sha256_bytes(data)
    write_bytes_atomic(design_path, data)
    write_bytes_atomic(hash_path, (digest + "\n").encode())
    return digest


@dataclass(frozen=True, slots=True)
class LoadedDesign:
    design: DesignRecord
    sha256: str


def load_design(run_dir: Path) -> LoadedDesign:
    """Read ``design.json`` and refuse it unless its bytes still match ``design.sha256``."""
    data, actual = _design_bytes(run_dir)
    return _decoded(data, actual)


def _design_bytes(run_dir: Path) -> tuple[bytes, str]:
    """``design.json``'s bytes and their SHA-256, refused unless it matches ``design.sha256``."""
    if not run_dir.is_dir():
        raise BadInput(f"{run_dir}: not a run directory (run bt-design first)")
    data = read_bytes(run_dir / DESIGN)
    actual = sha256_bytes(data)
    recorded = read_design_hash(run_dir)
    if actual != recorded:
        raise BadInput(
            f"{DESIGN} no longer matches {DESIGN_HASH} (sha256 {actual[:12]}..., recorded "
            f"{recorded[:12]}...): the design was edited after it was hashed; make a new design"
        )
    return data, actual


def _decoded(data: bytes, actual: str) -> LoadedDesign:
    design = _decode(data, DESIGN)
    _validate_document(design, data, "design", DESIGN)
    return LoadedDesign(design=cast(DesignRecord, design), sha256=actual)


# --------------------------------------------------------------------------- the design, lean

#: The lists of a design that grow with it (one entry per trial, per prompt).
LONG_LISTS = ("arrangement", "prompts")


def load_design_lean(run_dir: Path, *, prompt_digests: bool = True) -> LoadedDesign:
    """``load_design`` for a stage that holds the design for a long run (bt-generate): the
    same checks and errors, then its arrangement and prompts held as :class:`Columns`, so a
    30,000-trial design costs a few MiB for the rest of the run, not several hundred bytes
    per entry.

    The long lists are read a piece at a time (`_by_pieces`), so the whole design is never
    held as dicts, not even while it is read: that was most of what bt-generate's peak memory
    grew by with the trials. A design the pieces do not fit (not laid out as `dump_json`
    writes it) or that the compiled check does not pass at once is read whole, which decides
    and words any error as `load_design` does.

    The arrangement's prompt ids are held as the prompts' own id strings (equal values, one
    string each). ``prompt_digests=False`` leaves out each prompt's ``sha256`` once checked (a
    digest of its text, which bt-verify checks and bt-generate never reads: 3.8 MiB at 30,000
    prompts)."""
    data, actual = _design_bytes(run_dir)
    omit = () if prompt_digests else ("sha256",)
    design = _by_pieces(data, omit)
    if design is None:
        design = dict(_decoded(data, actual).design)
        for key in LONG_LISTS:
            design[key] = Columns(_without(entry, omit) for entry in design[key])
    else:
        _VALID_DOCUMENTS.add(("design", actual))  # every part of it passed the compiled check
    design["arrangement"].share("prompt_id", design["prompts"].values_of("id"))
    return LoadedDesign(design=cast(DesignRecord, design), sha256=actual)


def _without(entry: Mapping[str, Any], omit: tuple[str, ...]) -> Mapping[str, Any]:
    """A prompt entry without the keys ``omit`` names (an arrangement entry has none of them)."""
    if not omit or not any(key in entry for key in omit):
        return entry
    return {key: value for key, value in entry.items() if key not in omit}


#: About this many bytes of a long list are decoded at a time (orjson reserves several times a
#: text's size while it decodes it: at 1 MiB a piece that was most of the load's peak).
_PIECE_BYTES = 1 << 16


def _list_span(data: bytes, key: str) -> tuple[int, int] | None:
    """Where the text inside a top-level long list's brackets starts and ends, as
    `dump_json` lays it out (the key on a line of its own at two spaces, the closing bracket
    at two spaces); None when ``key`` is named anywhere else."""
    if data.count(b'"' + key.encode() + b'"') != 1:
        return None
    opener = b'\n  "' + key.encode() + b'": ['
    start = data.find(opener)
    if start < 0:
        return None
    body = start + len(opener)
    end = data.find(b"\n  ]", body)
    return None if end < 0 else (body, end)


def _pieces(data: bytes, body: int, end: int) -> Iterator[bytes]:
    """``data[body:end]`` (the values of one list and the commas between them) as JSON arrays
    of about `_PIECE_BYTES` each, cut only at a comma after an object closed at the depth of
    the list's entries (four spaces). A raw line break is never inside a JSON string, so such a
    cut in a file laid out otherwise leaves a bracket unclosed, and the piece fails to decode."""
    position = body
    while True:
        cut = data.find(b"\n    },", min(position + _PIECE_BYTES, end), end)
        if cut < 0:
            yield b"[" + data[position:end] + b"]"
            return
        comma = cut + len(b"\n    }")
        yield b"[" + data[position:comma] + b"]"
        position = comma + 1


def _by_pieces(data: bytes, omit: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The design with its long lists as `Columns`, read a piece at a time; None when it must
    be read whole (see `load_design_lean`).

    Exact, not a guess: the design less the text inside the lists' brackets (the skeleton) and
    every piece each decode, so the whole decodes to the skeleton with each list the pieces'
    values in turn; and every piece passes the compiled check inside the skeleton (with one
    entry of the other list), which is the check of the whole because the schema's rules on
    these lists are rules on each entry (tests/rundir/test_design_by_pieces.py holds the
    schema to that)."""
    spans = {key: _list_span(data, key) for key in LONG_LISTS}
    try:
        skeleton = _skeleton(data, spans)
        major = None if skeleton is None else tag_major(skeleton)
        if skeleton is None or major not in SCHEMA_MAJORS["design"]:
            return None
        check = fast_validator("design", major)
        decoded = {key: _decode_pieces(data, spans[key]) for key in LONG_LISTS}
        firsts = {key: next(pieces) for key, pieces in decoded.items()}
        if not all(firsts.values()):
            return None  # an empty list: the whole check words it
        design = dict(skeleton)
        for key in LONG_LISTS:
            other = next(k for k in LONG_LISTS if k != key)
            probe = {**skeleton, other: firsts[other][:1]}
            columns = Columns()
            for values in itertools.chain((firsts[key],), decoded[key]):
                probe[key] = values
                if not check.is_valid(probe):
                    return None
                for entry in values:
                    columns.append(_without(entry, omit) if key == "prompts" else entry)
            design[key] = columns
    except (orjson.JSONDecodeError, ValueError, TypeError, OverflowError):
        return None  # read whole: that decides, and words the error
    return design


def _skeleton(data: bytes, spans: Mapping[str, tuple[int, int] | None]) -> dict[str, Any] | None:
    """The design with its long lists emptied, decoded; None unless both were found, apart,
    and decode as the top-level lists of those names (each key is named once in the file)."""
    found = sorted(span for span in spans.values() if span is not None)
    if len(found) != len(LONG_LISTS) or found[0][1] > found[1][0]:
        return None
    parts = [data[: found[0][0]], data[found[0][1] : found[1][0]], data[found[1][1] :]]
    skeleton = orjson.loads(b"".join(parts))
    if not isinstance(skeleton, dict) or any(skeleton.get(k) != [] for k in LONG_LISTS):
        return None
    return skeleton


def _decode_pieces(data: bytes, span: tuple[int, int] | None) -> Iterator[list[Any]]:
    """The values of each piece of one list (a piece is "[" + values + "]": a list or an
    error)."""
    assert span is not None
    for piece in _pieces(data, *span):
        yield orjson.loads(piece)
