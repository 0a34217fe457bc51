"""What happens to an existing picks file before a judge writes to it: restarted with
``--force``, appended to (a person resuming), or refused in one line (a bot's picks never join
a person's, an LLM judge's never share a file with either, ``--force`` never deletes another
judge's picks, a judge resumes with the settings its picks were made with, a default judge id
never starts a second judge in a file unawares).

Used by one sitting (``blindtest.judging.sitting``) and the LLM judge's batch mode. Opens no
file itself, prints nothing, imports no click.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from blindtest.errors import BadInput, option
from blindtest.model.judge_kinds import PICK_KINDS
from blindtest.model.picks import (
    SETTING_OPTIONS,
    PicksFile,
    changed_settings,
    settings_changes,
    settings_of,
)

__all__ = ["check_default_id", "check_settings", "plan_output"]


def plan_output(
    existing: PicksFile, judge: str, *, bot: bool, force: bool, kind: str | None = None
) -> bool:
    """Decide what happens to an existing picks file before anything is written.

    Returns True when the file must be restarted empty (``--force``), False to append to it
    (a person resuming, or a new file). A person's picks never join a file that holds a bot's,
    nor a bot's a person's. A bot refuses an existing file without ``--force``,
    so its picks are never mixed into an earlier run of itself; ``--force`` refuses a file
    that holds another judge's picks, which it would delete.
    """
    path = existing.path
    pool = PICK_KINDS[kind].pool if kind in PICK_KINDS else None
    strangers = [
        p.judge for p in existing.picks if pool is not None and (pool == "llm") != (p.kind == "llm")
    ]
    if strangers:  # an LLM judge's picks never share a file with a person's or a bot's
        raise BadInput(
            f"{path} holds picks by {', '.join(dict.fromkeys(strangers))}, another kind of "
            f"judge; an LLM judge's picks never share a file with a person's or a bot's: use "
            f"{option('out', 'FILE')} for judge {judge!r}"
        )
    others = [p.judge for p in existing.picks if (p.kind == "bot") != bot]
    if others:  # bots are never pooled with people, not even in one file
        held = "a person's" if bot else "a bot's"
        raise BadInput(
            f"{path} holds {held} picks ({', '.join(dict.fromkeys(others))}); "
            f"{'a bot' if bot else 'a person'}'s picks never go into the same file: use "
            f"{option('out', 'FILE')} for judge {judge!r}"
        )
    if not force:
        if bot and path.exists():
            raise BadInput(
                f"{path} already exists; use {option('force', True)} to replace it, or "
                f"{option('out', 'FILE')} to write this judge's picks to a file of its own"
            )
        return False
    others = [name for name in existing.judges if name != judge]
    if others:
        listed = ", ".join(repr(name) for name in others[:3])
        raise BadInput(
            f"{path} also holds picks by {listed}; {option('force')} would delete them: use "
            f"{option('out', 'FILE')} for judge {judge!r}"
        )
    return path.exists()


def check_settings(existing: PicksFile, judge: str, settings: Mapping[str, Any] | None) -> None:
    """Refuse to resume ``judge`` into ``existing`` with other settings than its picks there
    were made with (``BadInput`` naming each setting that differs, old -> new). Picks that
    record no settings (a file from before they were recorded) are not compared; a judge
    without settings (a person) is never refused here."""
    if settings is None:
        return
    earlier = [
        found
        for pick in (*existing.picks, *existing.later_passes)
        if pick.judge == judge and (found := settings_of(pick)) is not None
    ]
    if not earlier:
        return
    changes = settings_changes(earlier[-1], settings)
    if changes:
        flags = [SETTING_OPTIONS.get(n, "") for n in changed_settings(earlier[-1], settings)]
        given = ", ".join(dict.fromkeys(f for f in flags if f))
        hint = f" ({given})" if given else ""
        raise BadInput(
            f"{existing.path} holds picks by judge {judge!r} made with other settings "
            f"({', '.join(changes)}); one judge's picks are made with one set of settings: "
            f"resume with the earlier settings{hint}, or write these picks to a new file "
            f"with {option('out', 'FILE')}"
        )


def check_default_id(existing: PicksFile, judge: str, default_of: str) -> None:
    """Refuse to start the judge ``judge`` (a default id: no --judge-id was given) in a file
    that holds picks by other judges and none by ``judge``: the user may mean to continue one
    of them (a person on another account, an LLM judge resumed under another model) and would
    otherwise start a second judge in the file unawares. ``default_of`` says where the id came
    from ("your user name")."""
    names = [
        *dict.fromkeys(p.judge for p in (*existing.picks, *existing.later_passes)),
    ]
    if not names or judge in names:
        return
    listed = ", ".join(repr(name) for name in names[:5]) + (", ..." if len(names) > 5 else "")
    raise BadInput(
        f"{existing.path} holds picks by {listed}, none by {judge!r} ({default_of}, as no "
        f"{option('judge_id')} was given): pass {option('judge_id')} with one of those names "
        f"to continue that judge, or {option('judge_id', shlex.quote(judge))} to add a judge "
        f"to this file, or {option('out', 'FILE')} for a file of its own"
    )
