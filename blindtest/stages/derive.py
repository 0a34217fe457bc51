"""``bt-design NEW --from RUN --drop-trial N``: a new design made from RUN's without the named
trials (a prompt no server will take, a trial that cannot be answered), so the run can go on
honestly: the kept trials ask exactly what they asked in RUN (bt-generate reuses every answer
RUN holds), the new design records where it came from, and the report says which trials were
dropped and why (:mod:`blindtest.derived`). Calls no model; RUN is only read."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest import artifacts
from blindtest.artifact_types import DesignRecord
from blindtest.errors import BadInput
from blindtest.locking import holding_run

__all__ = ["DerivedResult", "derive"]


@dataclass(frozen=True, slots=True)
class DerivedResult:
    """What :func:`derive` wrote: NEW's design and its hash, and the dropped trials as
    recorded (numbered as in the first design of the line, each with its reason)."""

    run_dir: Path
    design_path: Path
    sha256: str
    design: DesignRecord
    parent: Path
    dropped: tuple[dict[str, Any], ...]


def _failures(run: Path) -> dict[int, str]:
    """Each trial's last failure in RUN's ``responses.jsonl`` (its one-line error)."""
    path = run / artifacts.RESPONSES
    if not path.exists():
        return {}
    found: dict[int, str] = {}
    for row in artifacts.read_jsonl(path, "responses").records:
        if row.get("status") != "ok" and row.get("error"):
            found[int(row["trial"])] = str(row["error"])
    return found


def derive(
    run_dir: str | os.PathLike[str],
    from_run: str | os.PathLike[str],
    drop_trials: Sequence[int],
    reasons: Sequence[str] = (),
    *,
    holder: str | None = None,
) -> DerivedResult:
    """Write NEW's design (``run_dir``): FROM's design without ``drop_trials`` (numbered as in
    FROM), each with a reason: one ``reasons`` for all, one per trial, or none (then the
    trial's last failure in FROM, else "dropped by hand"). NEW must not exist yet (or hold
    this very design: a rerun changes nothing); FROM must hold a design that matches its
    hash. Everything is checked before NEW is created."""
    from blindtest.derived import derive_design
    from blindtest.provenance import collect_provenance

    new, parent_dir = Path(run_dir), Path(from_run)
    if not (parent_dir / artifacts.DESIGN).exists():
        raise BadInput(f"--from {parent_dir}: no {artifacts.DESIGN} there; give a run directory")
    loaded = artifacts.load_design(parent_dir)
    if new.exists() and new.resolve() == parent_dir.resolve():
        raise BadInput(f"{new}: that is the run given to --from; give a new directory")
    document = derive_design(
        loaded.design,
        loaded.sha256,
        list(drop_trials),
        list(reasons),
        _failures(parent_dir),
        str(parent_dir.absolute()),
        collect_provenance(),
    )
    same = False
    if new.exists():
        try:
            same = artifacts.design_difference(artifacts.load_design(new).design, document) is None
        except BadInput:
            same = False
        if not same:
            raise BadInput(f"{new} already exists; give a new directory for the derived design")
    with holding_run(new, holder, create=True):
        digest = artifacts.write_design(new, document)
    return DerivedResult(
        run_dir=new,
        design_path=new / artifacts.DESIGN,
        sha256=digest,
        design=document,  # type: ignore[arg-type]
        parent=parent_dir,
        dropped=tuple(document["derived_from"]["dropped"]),
    )
