"""Bring your own outputs: candidate directories instead of endpoints (spec 002's directory
mode; spec 001's "outputs written by one identical harness").

Layout. Each candidate is a directory named after it; an *item* is a file name. A candidate
answers an item with the file ``ITEM``, or with variants ``ITEM.1`` and ``ITEM.2`` (two
independent outputs, which the triangle needs from whichever candidate it doubles). Items are
the names every candidate (and the ``--reference`` directory, when given) has; anything missing
from one of them is dropped loudly, by name, because judging a candidate on an item another
lacks would weight the panel silently. With a reference, the reference file's text is what the
judge sees as the prompt; without one, the item name is.

This module reads candidate files (never run-directory files) and returns plain records; the
design records every file's SHA-256, and bt-generate refuses files that changed since.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.prompts import Prompt, decode_utf8
from blindtest.rundir.artifacts import sha256_bytes

_VARIANT = re.compile(r"^(?P<item>.+)\.(?P<variant>[12])$")


@dataclass(frozen=True, slots=True)
class CandidateFiles:
    """One candidate directory: item -> {variant ("0" for the plain file, "1", "2"): path}."""

    name: str
    path: Path
    items: dict[str, dict[str, Path]]

    def variants(self, item: str) -> list[str]:
        """The usable outputs for an item: ["1", "2"] when both variants exist, else one."""
        have = self.items[item]
        if "1" in have and "2" in have:
            return ["1", "2"]
        return ["0"] if "0" in have else [next(iter(sorted(have)))]


def scan_candidate(path: Path) -> CandidateFiles:
    if not path.is_dir():
        raise BadInput(
            f"{path}: not a directory ({option('from_dirs')} takes candidate directories)"
        )
    items: dict[str, dict[str, Path]] = {}
    for file in sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")):
        match = _VARIANT.match(file.name)
        item, variant = (match["item"], match["variant"]) if match else (file.name, "0")
        items.setdefault(item, {})[variant] = file
    if not items:
        raise BadInput(f"{path}: no files; a candidate directory holds one file per item")
    return CandidateFiles(name=path.resolve().name, path=path.resolve(), items=items)


def _read_text(path: Path) -> str:
    return decode_utf8(path.read_bytes(), str(path))


@dataclass(frozen=True, slots=True)
class DirsSource:
    """The common items of two candidates (and a reference), and what was dropped."""

    a: CandidateFiles
    b: CandidateFiles
    reference: Path | None
    items: list[str]
    dropped: dict[str, list[str]]

    def prompts(self) -> list[Prompt]:
        """One prompt per item: the reference text, or the item name without a reference."""
        return _item_prompts(self.items, self.reference)

    def record(self) -> dict[str, Any]:
        """The design's ``source``: directories, items and the SHA-256 of every file used."""
        files: dict[str, dict[str, dict[str, str]]] = {}
        for item in self.items:
            files[item] = {
                side: {v: sha256_bytes(c.items[item][v].read_bytes()) for v in c.variants(item)}
                for side, c in (("A", self.a), ("B", self.b))
            }
        return {
            "kind": "dirs",
            "dirs": {"A": str(self.a.path), "B": str(self.b.path)},
            "reference": str(self.reference.resolve()) if self.reference else None,
            "files": files,
            "dropped": self.dropped,
        }


def load_dirs(dir_a: Path, dir_b: Path, reference: Path | None) -> DirsSource:
    a, b = scan_candidate(dir_a), scan_candidate(dir_b)
    if a.name == b.name:
        raise BadInput(f"both candidate directories are named {a.name!r}; rename one")
    ref_items: set[str] | None = None
    if reference is not None:
        if not reference.is_dir():
            raise BadInput(f"{reference}: {option('reference')} must be a directory")
        ref_items = {p.name for p in reference.iterdir() if p.is_file()}
    everyone = set(a.items) & set(b.items)
    if ref_items is not None:
        everyone &= ref_items
    dropped: dict[str, list[str]] = {}
    for name, have in ((a.name, set(a.items)), (b.name, set(b.items))):
        missing = sorted((set(a.items) | set(b.items)) - have)
        if missing:
            dropped[name] = missing
    if ref_items is not None:
        missing = sorted((set(a.items) | set(b.items)) - ref_items)
        if missing:
            dropped["reference"] = missing
    if not everyone:
        raise BadInput(f"{dir_a} and {dir_b} share no item (file name); nothing to compare")
    return DirsSource(a=a, b=b, reference=reference, items=sorted(everyone), dropped=dropped)


@dataclass(frozen=True, slots=True)
class CandidateDirsSource:
    """The common items of k candidate directories (and a reference), and what was dropped:
    the several-candidate form of :class:`DirsSource`, keyed by candidate name."""

    candidates: tuple[CandidateFiles, ...]
    reference: Path | None
    items: list[str]
    dropped: dict[str, list[str]]

    def names(self) -> list[str]:
        return [c.name for c in self.candidates]

    def prompts(self) -> list[Prompt]:
        """One prompt per item, as :meth:`DirsSource.prompts`."""
        return _item_prompts(self.items, self.reference)

    def record(self) -> dict[str, Any]:
        """The design's ``source``, as :meth:`DirsSource.record` with candidate names where
        the two-sided one has A and B."""
        files = {
            item: {
                c.name: {v: sha256_bytes(c.items[item][v].read_bytes()) for v in c.variants(item)}
                for c in self.candidates
            }
            for item in self.items
        }
        return {
            "kind": "dirs",
            "dirs": {c.name: str(c.path) for c in self.candidates},
            "reference": str(self.reference.resolve()) if self.reference else None,
            "files": files,
            "dropped": self.dropped,
        }


def _item_prompts(items: list[str], reference: Path | None) -> list[Prompt]:
    prompts = []
    for number, item in enumerate(items, start=1):
        text = _read_text(reference / item) if reference else f"item: {item}"
        prompts.append(Prompt(id=item, text=text.strip() or f"item: {item}", line=number))
    return prompts


def _distinct_names(scanned: list[CandidateFiles]) -> None:
    seen: dict[str, Path] = {}
    for candidate in scanned:
        if candidate.name in seen:
            raise BadInput(
                f"two candidate directories are named {candidate.name!r} ({seen[candidate.name]}"
                f" and {candidate.path}); a candidate is named by its directory: rename one"
            )
        seen[candidate.name] = candidate.path


def load_candidate_dirs(dirs: list[Path], reference: Path | None) -> CandidateDirsSource:
    """k candidate directories, each named by its directory's name: the items present in
    every one (and in the reference), each dropped item named under the candidate (or
    ``reference``) that lacks it."""
    scanned = [scan_candidate(path) for path in dirs]
    _distinct_names(scanned)
    ref_items: set[str] | None = None
    if reference is not None:
        if not reference.is_dir():
            raise BadInput(f"{reference}: {option('reference')} must be a directory")
        ref_items = {p.name for p in reference.iterdir() if p.is_file()}
    union = set().union(*(set(c.items) for c in scanned))
    everyone = set.intersection(*(set(c.items) for c in scanned))
    if ref_items is not None:
        everyone &= ref_items
    dropped: dict[str, list[str]] = {}
    for candidate in scanned:
        missing = sorted(union - set(candidate.items))
        if missing:
            dropped[candidate.name] = missing
    if ref_items is not None:
        missing = sorted(union - ref_items)
        if missing:
            dropped["reference"] = missing
    if not everyone:
        raise BadInput(
            f"the {len(scanned)} candidate directories share no item (file name); nothing to "
            "compare"
        )
    return CandidateDirsSource(
        candidates=tuple(scanned), reference=reference, items=sorted(everyone), dropped=dropped
    )


def check_triangle_variants(source: DirsSource) -> None:
    """The triangle doubles each candidate in half the trials, so both need ITEM.1 and ITEM.2."""
    for candidate in (source.a, source.b):
        single = [item for item in source.items if candidate.variants(item) != ["1", "2"]]
        if single:
            raise BadInput(
                f"the triangle needs two outputs per item from each candidate ({single[0]}.1 "
                f"and {single[0]}.2 in {candidate.path}); {candidate.name} has only one for "
                f"{len(single)} item(s); add the variants or use {option('protocol', 'pair')} or "
                "preference"
            )


def imported_text(design_source: dict[str, Any], side: str, item: str, variant: str) -> str:
    """The text of one imported output, refused if the file changed since the design."""
    directory = Path(design_source["dirs"][side])
    name = item if variant == "0" else f"{item}.{variant}"
    path = directory / name
    try:
        data = path.read_bytes()
    except OSError:
        raise BadInput(f"{path}: missing; it was part of the design") from None
    if sha256_bytes(data) != design_source["files"][item][side][variant]:
        raise BadInput(f"{path} changed since the design was made; make a new design")
    return decode_utf8(data, str(path))
