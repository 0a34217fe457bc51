"""The design stage: prompts and options -> RUN/design.json and RUN/design.sha256. Calls no
model."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest import artifacts
from blindtest.artifact_types import DesignRecord
from blindtest.designing import DesignOptions, build_design
from blindtest.designrequest import DesignRequest, resolve_request
from blindtest.locking import holding_run
from blindtest.provenance import collect_provenance

__all__ = ["DesignResult", "design"]

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
    :class:`~blindtest.designrequest.DesignRequest` (``model_a``, ``model_b``, ``prompts_file``
    or ``demo``, ``protocol``, ``trials``, ``seed``, ``a_url``...), the command's options by
    their Python names. The same design again writes nothing (a rerun resumes); another one
    is refused (:class:`~blindtest.artifacts.DesignDiffers`) unless ``force``, and never once
    later stages built on the old one.

    Holds RUN's lock (creating RUN); ``holder`` names this process in another's refusal.
    ``on_dropped(candidate, items)``: told, before the design is built, of the items a
    ``from_dirs`` candidate lacks."""
    run = Path(run_dir)
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
    with holding_run(run, holder, create=True):
        resolved = resolve_request(DesignRequest(**options))
        if on_dropped is not None:
            for candidate, items in resolved.dropped.items():
                on_dropped(candidate, items)
        document = build_design(resolved.prompts, resolved.options, collect_provenance())
        digest = artifacts.write_design(run, document, force=force)
    return DesignResult(
        run_dir=run,
        design_path=run / artifacts.DESIGN,
        hash_path=run / artifacts.DESIGN_HASH,
        sha256=digest,
        design=document,
        options=resolved.options,
        prompts=len(resolved.prompts),
        dropped=resolved.dropped,
    )
