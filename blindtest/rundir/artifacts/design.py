"""The design's two files: ``design.json`` written with ``design.sha256`` (the hash of its
exact bytes), the same design again resumed, a different one refused naming the first
difference; read back only while the bytes still match the hash.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    design = _decode(data, DESIGN)
    _validate_document(design, data, "design", DESIGN)
    return LoadedDesign(design=cast(DesignRecord, design), sha256=actual)


# --------------------------------------------------------------------------- the design, lean

#: The lists of a design that grow with it (one entry per trial, per prompt).
LONG_LISTS = ("arrangement", "prompts")


def load_design_lean(run_dir: Path) -> LoadedDesign:
    """``load_design`` for a stage that holds the design for a long run (bt-generate): the
    same checks and errors, then its arrangement and prompts held as :class:`Columns`, so a
    30,000-trial design costs a few MiB for the rest of the run, not several hundred bytes
    per entry."""
    loaded = load_design(run_dir)
    design: dict[str, Any] = dict(loaded.design)
    for key in LONG_LISTS:
        design[key] = Columns(design[key])
    return LoadedDesign(design=cast(DesignRecord, design), sha256=loaded.sha256)
