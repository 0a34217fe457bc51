"""``generation.json``: per-role totals, the session ledger and its summary line, and the
checks that every slot is answered (or why not)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest import reportfmt
from blindtest.errors import EndpointFailed
from blindtest.generation.cost import _cost
from blindtest.generation.guard import DrawCollisions, deterministic_endpoint_error, identical_draws
from blindtest.generation.ledger import Ledger
from blindtest.generation.requests import _role_model
from blindtest.model.candidates import candidates_of
from blindtest.model.normalize import outside_band
from blindtest.model.protocols import protocol_of
from blindtest.model.slots import LAUNDER, SlotState, Work, pending_work
from blindtest.rundir.artifacts import JsonObject, schema_tag
from blindtest.rundir.types import DesignRecord, GenerationRecord


@dataclass
class RowCounts:
    """Rows, the HTTP requests behind them, and failure rows: what a session's summary and
    ledger entry need of its rows."""

    rows: int = 0
    requests: int = 0
    failed: int = 0

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows += 1
        self.requests += int(row.get("attempts") or 0)
        self.failed += row["status"] != "ok"

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]] | RowCounts) -> RowCounts:
        if isinstance(rows, RowCounts):
            return rows
        counts = cls()
        for row in rows:
            counts.add(row)
        return counts


def endpoint_failure_summary(design: DesignRecord, state: SlotState | Ledger) -> EndpointFailed:
    """Exit-3 error for a run that ended with slots still unanswered. Prompts too long for the
    server are named by trial and prompt (never by side or slot: this is shown before judging)."""
    missing = _missing(design, state)
    too_long: dict[int, str] = {}
    said = last_error = ""
    n_long = 0
    for work in missing:
        rows = state.laundered if work.stage == LAUNDER else state.generated
        row: Mapping[str, Any] = rows.get((work.slot.trial, work.slot.slot)) or {}
        if row.get("kind") == "too_long":
            too_long[work.slot.trial] = work.slot.prompt_id
            n_long += 1
            said = str(row.get("error", "")).partition(": ")[2]
        elif row.get("error"):
            last_error = f"; last error: {row['error']}"
    rest = "what was fetched is kept, rerun bt-generate to fetch the rest"
    if not too_long:
        return EndpointFailed(
            f"{len(missing)} slot(s) still unanswered after retries{last_error}; {rest}"
        )
    named = ", ".join(f"trial {t} (prompt {p})" for t, p in sorted(too_long.items()))
    these = "that prompt" if len(too_long) == 1 else "those prompts"
    others = len(missing) - n_long
    more = f"; {others} more after retries{last_error}" if others else ""
    drops = " ".join(f"--drop-trial {t}" for t in sorted(too_long))
    return EndpointFailed(
        f"{len(missing)} slot(s) still unanswered: {named}: {said}; shorten or drop {these} "
        f"in a new design (bt-design NEW --from RUN {drops} reuses every answer fetched), "
        f"or give the server a larger context{more}; {rest}"
    )


# --------------------------------------------------------------------------- summary and cost


class Totals:
    """Per-role totals over rows fed one at a time (``generation.json``'s ``roles``)."""

    def __init__(self, design: DesignRecord) -> None:
        launder = [LAUNDER] if design["normalization"]["launder"] else []
        self.roles = [*candidates_of(design), *launder]
        self.band = design["normalization"]["length_band"]
        self.summary: dict[str, dict[str, Any]] = {}
        for role in self.roles:
            self.summary[role] = {
                "model": _role_model(design, role),
                "responses": 0,
                "failures": 0,
                "requests": 0,
                "retries": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "truncated": 0,
                "refusals": 0,
                "outside_length_band": 0 if self.band and role != LAUNDER else None,
                "mean_latency_ms": None,
                "cost": None,
            }
        self.latency_sum: dict[str, float] = {role: 0 for role in self.roles}
        self.latency_count: dict[str, int] = {role: 0 for role in self.roles}

    def add(self, row: Mapping[str, Any]) -> None:
        role = LAUNDER if row.get("stage") == LAUNDER else row["side"]
        entry = self.summary[role]
        entry["requests"] += row["attempts"]
        entry["retries"] += max(0, row["attempts"] - 1)
        usage = row.get("usage") or {}
        entry["prompt_tokens"] += usage.get("prompt_tokens") or 0
        entry["completion_tokens"] += usage.get("completion_tokens") or 0
        if row["status"] != "ok":
            entry["failures"] += 1
            return
        entry["responses"] += 1
        entry["truncated"] += bool(row.get("truncated"))
        entry["refusals"] += row.get("kind") == "refusal"
        if row.get("latency_ms") is not None:
            self.latency_sum[role] += row["latency_ms"]  # summed in file order, as sum() does
            self.latency_count[role] += 1
        if entry["outside_length_band"] is not None:
            band = self.band
            entry["outside_length_band"] += outside_band(row["text"], band["lo"], band["hi"])

    def result(self, prices: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, Any]]:
        summary = {role: dict(entry) for role, entry in self.summary.items()}
        for role, entry in summary.items():
            if self.latency_count[role]:
                mean = self.latency_sum[role] / self.latency_count[role]
                entry["mean_latency_ms"] = round(mean, 3)
            if role in prices:
                entry["cost"] = _cost(
                    prices[role], entry["prompt_tokens"], entry["completion_tokens"]
                )
        return summary


def summarize(
    design: DesignRecord,
    rows: Iterable[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
) -> dict[str, dict[str, Any]]:
    """Per-role totals over every row in ``responses.jsonl`` (all runs, resumed ones too)."""
    totals = Totals(design)
    for row in rows:
        totals.add(row)
    return totals.result(prices)


def generation_record(
    design: DesignRecord,
    design_sha256: str,
    rows: Sequence[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
    wall_seconds: float,
    sessions: Sequence[JsonObject] | None = None,
) -> GenerationRecord:
    """``generation.json``: totals over every row, and whether every slot is answered.

    ``sessions`` is the ledger (one entry per bt-generate run that fetched something: its
    wall time, requests and rows), a measurement carried from the file as ``wall_seconds`` is.
    """
    state = SlotState.from_rows(rows)
    identical = identical_draws(design, state) if protocol_of(design).repeats_side else None
    return _generation(
        design,
        design_sha256,
        not pending_work(design, state),
        summarize(design, rows, prices),
        identical,
        prices,
        wall_seconds,
        sessions,
    )


def _generation(
    design: DesignRecord,
    design_sha256: str,
    complete: bool,
    roles: dict[str, dict[str, Any]],
    identical: int | None,
    prices: Mapping[str, tuple[float, float]],
    wall_seconds: float,
    sessions: Sequence[JsonObject] | None,
) -> GenerationRecord:
    record: GenerationRecord = {
        "schema": schema_tag("generation"),
        "design_sha256": design_sha256,
        "complete": complete,
        "wall_seconds": round(wall_seconds, 3),
        "prices": {role: {"input": p[0], "output": p[1]} for role, p in prices.items()},
        "roles": roles,
        "identical_draws": identical,
    }
    if sessions is not None:
        record["sessions"] = [dict(session) for session in sessions]
    return record


def session_entry(rows: Sequence[Mapping[str, Any]] | RowCounts, wall_seconds: float) -> JsonObject:
    """One ledger entry: the rows a session appended, the HTTP requests behind them."""
    counts = RowCounts.of(rows)
    return {
        "wall_seconds": round(wall_seconds, 3),
        "requests": counts.requests,
        "rows": counts.rows,
    }


def ledger(
    previous: Mapping[str, Any] | None,
    design_sha256: str,
    earlier_rows: Sequence[Mapping[str, Any]] | RowCounts,
    session: JsonObject | None,
) -> tuple[list[JsonObject] | None, float]:
    """The sessions and total wall time after this session (``None``: it fetched nothing).

    A ``generation.json`` from before the ledger counts as one session holding every row
    that was on disk before this one; one that fetched nothing since keeps no ledger (so a
    rerun leaves its bytes as they are).
    """
    sessions: list[JsonObject] | None = None
    wall = 0.0
    if previous is not None and previous.get("design_sha256") == design_sha256:
        wall = float(previous.get("wall_seconds", 0.0))
        if "sessions" in previous:
            sessions = [dict(entry) for entry in previous["sessions"]]
        elif session is not None:
            sessions = [session_entry(earlier_rows, wall)]
    if session is not None:
        sessions = [*(sessions or []), session]
        wall += float(session["wall_seconds"])
    return sessions, wall


def recorded_prices(
    previous: Mapping[str, Any] | None, design_sha256: str
) -> dict[str, tuple[float, float]]:
    """Prices an earlier session recorded (kept unless new ones are given)."""
    if previous is None or previous.get("design_sha256") != design_sha256:
        return {}
    return {role: (p["input"], p["output"]) for role, p in previous.get("prices", {}).items()}


def _said_prices(
    previous: Mapping[str, Any] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
) -> str:
    recorded = {
        role: (float(p["input"]), float(p["output"]))
        for role, p in (previous or {}).get("prices", {}).items()
    }
    kept = sorted(set(prices) - set(given))
    # A price given again as it was recorded replaced nothing: only a changed one is said.
    replaced = sorted(
        role
        for role in given
        if role in recorded and (float(given[role][0]), float(given[role][1])) != recorded[role]
    )
    added = sorted(role for role in given if role not in recorded)
    said = f"; recorded prices kept for {', '.join(kept)}" if kept else ""
    said += f"; prices replaced for {', '.join(replaced)}" if replaced else ""
    if previous is not None and added:
        said += f"; prices recorded for {', '.join(added)}"
    return said


def session_summary(
    fetched: Sequence[Mapping[str, Any]] | RowCounts,
    total_rows: int,
    previous: Mapping[str, Any] | None,
    sessions: Sequence[JsonObject] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
    changed: bool,
    figures: str = "per-side",
) -> str:
    """What a session did, the same whichever side is which: totals over both sides only
    (tokens, costs, timings and failures per side are in generation.json, for after judging);
    a second line for a resumed run: the ledger and the prices. ``figures``: what
    generation.json holds them per (``per-candidate`` for a design of candidates)."""
    said_prices = _said_prices(previous, given, prices)
    counts = RowCounts.of(fetched)
    if not counts.rows:
        state = "updated" if changed else "unchanged"
        return (
            f"nothing to fetch ({reportfmt.count(total_rows, 'row')} on disk); "
            f"generation.json {state}{said_prices}"
        )
    line = (
        f"fetched {reportfmt.count(counts.rows, 'row')} ({counts.failed} failed) in "
        f"{reportfmt.count(counts.requests, 'request')}; "
        f"{figures} figures are in generation.json, for after judging"
    )
    if sessions is not None and len(sessions) > 1:
        line += f"\nresumed: session {len(sessions)} added to the ledger{said_prices}"
    return line


def check_not_deterministic(
    design: DesignRecord, state: SlotState | Ledger, collisions: DrawCollisions | None = None
) -> None:
    """Raise the deterministic-endpoint stop if the rows on disk already show it."""
    if collisions is None:
        assert isinstance(state, SlotState)
        collisions = DrawCollisions.for_design(design, state)
    if collisions.refused():
        raise deterministic_endpoint_error(design, collisions)


def check_finished(
    design: DesignRecord, state: SlotState | Ledger, collisions: DrawCollisions | None = None
) -> None:
    """Raise why the blinded view cannot be written yet (deterministic endpoint: exit 1;
    slots still unanswered: exit 3); return when every slot is answered."""
    check_not_deterministic(design, state, collisions)
    if _missing(design, state):
        raise endpoint_failure_summary(design, state)


def _missing(design: DesignRecord, state: SlotState | Ledger) -> list[Work]:
    if isinstance(state, Ledger):
        return list(state.pending())
    return pending_work(design, state)
