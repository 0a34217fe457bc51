"""The design stage: prompts and options -> RUN/design.json and RUN/design.sha256. Calls no
model."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from blindtest.designing.build import DesignOptions, build_design
from blindtest.designing.request import DesignRequest, resolve_request
from blindtest.errors import BadInput, option
from blindtest.model.candidates import shares_answers
from blindtest.rundir import artifacts
from blindtest.rundir.locking import holding_run
from blindtest.rundir.provenance import collect_provenance
from blindtest.rundir.types import DesignRecord

__all__ = ["DerivedResult", "DesignResult", "derive", "design", "preview"]

#: The options that name files: given as text by a Python caller, read as paths.
_PATHS = ("prompts_file", "strip_identity_words", "reference")


@dataclass(frozen=True, slots=True)
class DesignResult:
    """What :func:`design` wrote: the design and its hash file, the hash, the options it was
    built from (defaults filled in, the seed drawn when none was given), how many distinct
    prompts it draws from, and the items ``from_dirs`` dropped (by candidate)."""

    run_dir: Path
    design_path: Path
    hash_path: Path
    sha256: str
    design: DesignRecord
    options: DesignOptions
    prompts: int
    dropped: Mapping[str, list[str]]
    #: Lines to show before the run starts: prompts too large to be asked, or holding bidi
    #: control characters (warnings, not refusals: :mod:`blindtest.model.prompt_size`).
    warnings: tuple[str, ...] = ()

    @property
    def protocol(self) -> str:
        return self.options.protocol

    @property
    def seed(self) -> str:
        return self.options.seed


def design(
    run_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    holder: str | None = None,
    on_dropped: Callable[[str, list[str]], None] | None = None,
    **options: Any,
) -> DesignResult:
    """Write RUN's pre-registered design (``bt-design``): ``options`` are the fields of
    :class:`~blindtest.designing.request.DesignRequest` (``model_a``, ``model_b``, ``prompts_file``
    or ``demo``, ``protocol``, ``trials``, ``seed``, ``a_url``...), the command's options by
    their Python names. Several candidates: ``candidate`` (``["fast=m1", ...]`` or
    ``{"fast": "m1", ...}``), or ``sides`` (a .json/.toml file, or that document as Python
    values), or ``from_dirs`` with three or more directories; ``pairs`` says who meets whom.
    The same design again writes nothing (a rerun resumes); another one
    is refused (:class:`~blindtest.rundir.artifacts.DesignDiffers`) unless ``force``, and never once
    later stages built on the old one.

    Holds RUN's lock (creating RUN); ``holder`` names this process in another's refusal.
    ``on_dropped(candidate, items)``: told, before the design is built, of the items a
    ``from_dirs`` candidate lacks."""
    run = Path(run_dir)
    _as_given(options)
    with holding_run(run, holder, create=True):
        resolved = resolve_request(DesignRequest(**options))
        if on_dropped is not None:
            for candidate, items in resolved.dropped.items():
                on_dropped(candidate, items)
        document = build_design(resolved.prompts, resolved.options, collect_provenance())
        digest = artifacts.write_design(run, document, force=force)
    made = resolved.options
    if made.candidates:  # the comparisons the schedule gave (--trials only caps them)
        made = replace(made, trials=document["trials"])
    return DesignResult(
        run_dir=run,
        design_path=run / artifacts.DESIGN,
        hash_path=run / artifacts.DESIGN_HASH,
        sha256=digest,
        design=document,
        options=made,
        prompts=len(resolved.prompts),
        dropped=resolved.dropped,
        warnings=_warnings(document),
    )


def _as_given(options: dict[str, Any]) -> None:
    """A Python caller's values as the command's: paths from text, tuples from lists."""
    for name in _PATHS:
        if isinstance(options.get(name), str):
            options[name] = Path(options[name])
    if options.get("from_dirs") is not None:
        options["from_dirs"] = tuple(Path(p) for p in options["from_dirs"])
    if isinstance(options.get("extra_questions"), list):
        options["extra_questions"] = tuple(options["extra_questions"])
    for side in ("a", "b"):
        if isinstance(options.get(f"{side}_param"), list):
            options[f"{side}_param"] = tuple(options[f"{side}_param"])
    # Several candidates: ``candidate`` as a list or a {name: model} mapping; ``sides`` as a
    # file name or the document itself (a list of tables with ``name``, or one per name).
    candidate = options.get("candidate")
    if isinstance(candidate, dict):
        options["candidate"] = tuple(f"{name}={model}" for name, model in candidate.items())
    elif isinstance(candidate, list):
        options["candidate"] = tuple(candidate)
    if isinstance(options.get("sides"), str):
        options["sides"] = Path(options["sides"])


def preview(**options: Any) -> DesignRecord:
    """The design :func:`design` would write for ``options``, built in memory: nothing is
    written, no directory made (``blindtest run --check``)."""
    _as_given(options)
    resolved = resolve_request(DesignRequest(**options))
    return build_design(resolved.prompts, resolved.options, collect_provenance())


def _warnings(document: Mapping[str, Any]) -> tuple[str, ...]:
    from blindtest.model.prompt_size import bidi_warnings, large_prompt_warnings

    used = [entry["prompt_id"] for entry in document["arrangement"]]
    return (
        *large_prompt_warnings(document["prompts"], used),
        *bidi_warnings(document["prompts"], used),
    )


# --------------------------------------------------------------------------- --from RUN
# ``bt-design NEW --from RUN --drop-trial N``: a new design made from RUN's without the named
# trials (a prompt no server will take), so the run can go on honestly: the kept trials ask
# exactly what they asked in RUN (bt-generate reuses every answer RUN holds), the new design
# records where it came from, and the report says which trials were dropped and why
# (:mod:`blindtest.model.derived`). Calls no model; RUN is only read.


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
            trial = int(row["trial"])
            said = str(row["error"]).removeprefix(f"trial {trial}, prompt {row.get('prompt_id')}: ")
            found[trial] = said
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
    from blindtest.model.derived import derive_design
    from blindtest.rundir.provenance import collect_provenance

    new, parent_dir = Path(run_dir), Path(from_run)
    if not (parent_dir / artifacts.DESIGN).exists():
        raise BadInput(
            f"{option('from_run', parent_dir)}: no {artifacts.DESIGN} there; give a run directory"
        )
    loaded = artifacts.load_design(parent_dir)
    if shares_answers(loaded.design):
        raise BadInput(
            f"{option('from_run', parent_dir)}: a design with several candidates cannot be made "
            "again "
            "without some comparisons (each answer is shared by every comparison of its "
            "prompt); make a new design from the prompts you keep"
        )
    if new.exists() and new.resolve() == parent_dir.resolve():
        raise BadInput(
            f"{new}: that is the run given to {option('from_run')}; give a new directory"
        )
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
