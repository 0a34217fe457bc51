"""bt-generate's stage: fetch the slots a design still needs, import a --from-dirs design's
files, check the rows on disk are current, and write the blinded view and ``generation.json``.
Never opens a file (records go out through an ``append`` callback, files are read and written
by the caller's callbacks) and never opens a socket (requests go through the ``ChatClient`` it
is given). The jobs it chains sit in :mod:`blindtest.generation`: what is sent
(``requests``), the rows (``responses``), the ledger, fetching (``fetch``), the
deterministic-side guard (``guard``), ``generation.json`` (``summary``), the cost estimate
(``cost``) and batch files (``batch_rows``).

Resume. ``responses.jsonl`` is append-only; an answered slot is never requested again, and a
failure row leaves its slot pending for the next run.

Normalization. Per response: ``--strip-formatting`` is applied to the text stored in the row
(the original kept in ``raw_text``); laundering adds a second row per slot holding the
rewrite. Per trial: ``--truncate-match`` is applied when the blinded view is built
(:func:`blindtest.model.slots.build_trials_view`); ``trials.jsonl`` is exactly what the judge sees.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from blindtest import reportfmt
from blindtest.errors import BadInput, CheckFailed, EndpointFailed, option
from blindtest.generation.cost import check_price_roles, estimate_cost
from blindtest.generation.fetch import Progress, run_generation
from blindtest.generation.guard import DrawCollisions, collision_notice
from blindtest.generation.ledger import (
    AddRow,
    Ledger,
    ReadRow,
    check_row_fits,
    refetch_notice,
    role_order,
    stale_rows_error,
)
from blindtest.generation.requests import SlotRequests, endpoints_for
from blindtest.generation.responses import import_rows
from blindtest.generation.stage_io import StageIO
from blindtest.generation.summary import (
    RowCounts,
    Totals,
    _generation,
    check_finished,
    check_not_deterministic,
    ledger,
    recorded_prices,
    session_entry,
    session_summary,
)
from blindtest.model.candidates import candidates_of, has_side_options, shares_answers
from blindtest.model.protocols import protocol_of
from blindtest.model.sides import SIDES, parse_header_env
from blindtest.model.slots import LAUNDER, SlotState, iter_trials_view
from blindtest.rundir.types import DesignRecord, ResponseRow, TrialRecord
from blindtest.transport.client import DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT, ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.keynames import check_key_names
from blindtest.transport.retry import DEFAULT_POLICY, RetryPolicy

# --------------------------------------------------------------------------- the stage


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """How hard to ask: requests in flight per endpoint, seconds of silence before giving up
    on an answer, requests started per minute, retries per request."""

    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    rpm: float | None = None
    max_retries: int = DEFAULT_POLICY.max_retries
    #: Per side: ``--a-concurrency``, ``--a-rpm`` (the shared ones for the rest),
    #: and ``--a-header-env NAME:ENVVAR`` headers (values read when sending, never written).
    side_concurrency: Mapping[str, int] = field(default_factory=dict)
    side_rpm: Mapping[str, float] = field(default_factory=dict)
    header_env: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: ``--refetch-changed``: ask again for the slots whose answer on disk was made for
    #: another request than the slot makes now (else such answers refuse the run).
    refetch_changed: bool = False


def side_transport(given: dict[str, Any]) -> dict[str, Any]:
    """``FetchOptions`` keywords from the per-side transport options, popped from ``given``
    (``a_concurrency``, ``b_rpm``, ``a_header_env``...; None or empty: not given), and
    ``refetch_changed`` (False when not given)."""
    found: dict[str, Any] = {"side_concurrency": {}, "side_rpm": {}, "header_env": {}}
    found["refetch_changed"] = bool(given.pop("refetch_changed", False))
    for side in SIDES:
        lower = side.lower()
        concurrency = given.pop(f"{lower}_concurrency", None)
        rpm = given.pop(f"{lower}_rpm", None)
        headers = given.pop(f"{lower}_header_env", ()) or ()
        if concurrency is not None:
            found["side_concurrency"][side] = concurrency
        if rpm is not None:
            if not (math.isfinite(rpm) and rpm > 0):
                raise BadInput(f"{option(f'{lower}_rpm')}: expected a finite number > 0, got {rpm}")
            found["side_rpm"][side] = rpm
        found["header_env"][side] = tuple(
            parse_header_env(option(f"{lower}_header_env"), item) for item in headers
        )
    return found


def check_side_options(design: DesignRecord, options: FetchOptions) -> None:
    """A design of candidates has no sides A and B: ``--a-concurrency``, ``--b-rpm``,
    ``--a-header-env``... are refused (one line) rather than applied to nobody; ``--concurrency``
    and ``--rpm`` hold per endpoint (candidates asking one server with one key share them)."""
    if has_side_options(design):
        return
    given = [
        option(f"{side.lower()}_{name}")
        for name, values in (
            ("concurrency", options.side_concurrency),
            ("rpm", options.side_rpm),
            ("header_env", options.header_env),
        )
        for side, value in values.items()
        if value
    ]
    if given:
        raise BadInput(
            f"{given[0]}: this design has candidates ({', '.join(candidates_of(design))}), not "
            f"sides A and B; {option('concurrency')} and {option('rpm')} hold per endpoint, "
            "shared by the candidates on it"
        )


class TrialsView:
    """``trials.jsonl`` to be written: iterated one trial at a time (each reads its rows back
    from ``responses.jsonl``), so 30,000 trials are never held at once. Compares equal to a
    list of the same records."""

    def __init__(self, design: DesignRecord, state: SlotState | Ledger) -> None:
        self.design = design
        self.state = state

    def __len__(self) -> int:
        return len(self.design["arrangement"])

    def __iter__(self) -> Iterator[TrialRecord]:
        return iter_trials_view(self.design, self.state)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TrialsView | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _Book:
    """What a session knows of ``responses.jsonl``: the ledger, the totals, the draw
    collisions and the row counts (before it and in it), built from the rows on disk and kept
    up to date as rows are appended (each fed once, none held)."""

    def __init__(self, design: DesignRecord, read_row: ReadRow | None) -> None:
        self.design = design
        self.memory: list[Mapping[str, Any]] | None = [] if read_row is None else None
        reader = read_row if read_row is not None else self._from_memory
        self.ledger = Ledger(design, reader, SlotRequests(design))
        self.totals = Totals(design)
        self.collisions = DrawCollisions.empty(design)
        self.earlier = RowCounts()
        self.session = RowCounts()

    def _from_memory(self, ref: int) -> Mapping[str, Any]:
        assert self.memory is not None
        return self.memory[ref]

    @classmethod
    def open(cls, design: DesignRecord, existing: Iterable[Any], read_row: ReadRow | None) -> _Book:
        """From the rows on disk (``(offset, row)`` pairs when ``read_row`` reads by offset),
        each checked against the design before anything is appended."""
        book = cls(design, read_row)
        for number, item in enumerate(existing, start=1):
            ref, row = (len(book.memory), item) if book.memory is not None else item
            check_row_fits(design, book.ledger, row, number)
            if book.memory is not None:
                book.memory.append(row)
            book.earlier.add(row)
            book._take(row, ref)
        return book

    def _take(self, row: Mapping[str, Any], ref: int) -> bool:
        self.totals.add(row)
        newly = self.ledger.record(row, ref)
        if newly and row.get("stage") != LAUNDER:
            self.collisions.take(row["trial"], row["slot"], row)
        return newly

    def adder(self, append: Callable[[ResponseRow], Any]) -> AddRow:
        """``append`` for the run: counts each row and returns its reference (the ledger
        itself is updated by whoever records it)."""

        def add(row: ResponseRow) -> int:
            ref = append(row)
            if self.memory is not None:
                self.memory.append(row)
                ref = len(self.memory) - 1
            self.totals.add(row)
            self.session.add(row)
            return int(ref)

        return add

    def append_all(self, append: Callable[[ResponseRow], Any], rows: Iterable[ResponseRow]) -> None:
        """Append rows and take them into the ledger (imports: no request made)."""
        add = self.adder(append)
        for row in rows:
            ref = add(row)
            newly = self.ledger.record(row, ref, current=True)
            if newly and row.get("stage") != LAUNDER:
                self.collisions.take(row["trial"], row["slot"], row)


def generate_stage(
    design: DesignRecord,
    design_sha256: str,
    existing: Iterable[Any],
    previous: Mapping[str, Any] | None,
    given_prices: Mapping[str, tuple[float, float]],
    options: FetchOptions,
    io: StageIO,
) -> TrialsView:
    """bt-generate's work: fetch (or import) every slot still missing, record the session in
    ``generation.json``, and return the blinded view (``trials.jsonl``) once every slot is
    answered.

    ``existing`` are the rows already on disk (with ``io.read_row``: ``(offset, row)``
    pairs, read one at a time), ``previous`` the ``generation.json`` an earlier session
    wrote (its ledger and prices). Checks everything before appending anything: rows that
    do not fit the design and unset key variables are ``BadInput``. A run that stops
    (``EndpointFailed``, the deterministic guard's ``CheckFailed``, Ctrl-C) still records what
    it fetched in ``generation.json`` before the error goes on; a run that leaves slots
    unanswered raises (:func:`check_finished`); a triangle with some identical draws says so.
    Memory: a few bytes per slot (:class:`Ledger`); no row is held.
    """
    check_side_options(design, options)
    check_price_roles(design, given_prices)
    book = _Book.open(design, existing, io.read_row)
    stale = book.ledger.stale()
    if stale and not options.refetch_changed:
        raise BadInput(stale_rows_error(design, stale))
    if stale:
        io.say(refetch_notice(design, stale))
    endpoints = {
        role: replace(endpoint, header_env=options.header_env.get(role, ()))
        for role, endpoint in endpoints_for(design).items()
    }
    check_key_names(endpoints)  # a misspelt variable is named before any request
    for role, endpoint in endpoints.items():
        endpoint.check_key(role)
    prices = recorded_prices(previous, design_sha256) | dict(given_prices)
    if design["source"]["kind"] == "dirs":
        rows = import_rows(design, book.ledger, io.read_imported)  # every file read first
        with io.open_responses() as append:
            book.append_all(append, rows)
        del rows
    started = time.monotonic()
    stopped = _fetch_missing(design, endpoints, book, prices, options, io)
    if stopped is not None and not book.session.rows:
        raise stopped
    fetched = book.session
    session = session_entry(fetched, time.monotonic() - started) if fetched.rows else None
    sessions, wall = ledger(previous, design_sha256, book.earlier, session)
    triangle = protocol_of(design).repeats_side
    record = _generation(
        design,
        design_sha256,
        book.ledger.missing() == 0,
        book.totals.result(prices),
        book.collisions.identical if triangle else None,
        prices,
        wall,
        sessions,
    )
    changed = io.write_generation(record)
    total = book.earlier.rows + fetched.rows
    figures = "per-side" if has_side_options(design) else "per-candidate"
    io.say(
        session_summary(fetched, total, previous, sessions, given_prices, prices, changed, figures)
    )
    if stopped is not None:
        raise stopped
    check_finished(design, book.ledger, book.collisions)
    notice = collision_notice(book.collisions)
    if notice:
        io.say(notice)
    return TrialsView(design, book.ledger)


def _fetch_missing(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    book: _Book,
    prices: Mapping[str, tuple[float, float]],
    options: FetchOptions,
    io: StageIO,
) -> BaseException | None:
    """Fetch every pending slot; return the error that stopped the run early, if one did."""
    pending = book.ledger.missing()
    if not pending:
        return None
    check_not_deterministic(design, book.ledger, book.collisions)  # found on an earlier run
    _announce(design, estimate_cost(design, prices), pending, book.earlier.rows, io.say)
    progress = Progress(total=pending)
    try:
        with io.open_responses() as append:
            add = book.adder(append)
            asyncio.run(_fetch(design, endpoints, book, add, options, progress, io))
    except (EndpointFailed, CheckFailed, KeyboardInterrupt) as error:
        return error  # the ledger still records what this session fetched
    return None


async def _fetch(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    book: _Book,
    add: AddRow,
    options: FetchOptions,
    progress: Progress,
    io: StageIO,
) -> None:
    policy = RetryPolicy(max_retries=options.max_retries)
    async with ChatClient(
        endpoints,
        concurrency=options.concurrency,
        rpm=options.rpm,
        timeout=options.timeout,
        policy=policy,
        side_concurrency=options.side_concurrency,
        side_rpm=options.side_rpm,
        share_endpoints=not has_side_options(design),  # --concurrency per endpoint, not candidate
    ) as client:

        def update(final: bool = False) -> None:
            if io.on_progress is not None:  # no display (--quiet, not a terminal): no count
                progress.retries = client.counters().retries
                io.on_progress(progress, final)

        try:
            await run_generation(
                design,
                client,
                book.ledger,
                add,
                concurrency=options.concurrency,
                progress=progress,
                on_update=update,
                collisions=book.collisions,
            )
        finally:
            update(final=True)


def _announce(
    design: DesignRecord,
    estimate: Mapping[str, Mapping[str, float]],
    pending: int,
    existing: int,
    say: Callable[[str], None],
) -> None:
    resumed = f" (resuming: {reportfmt.count(existing, 'row')} already on disk)" if existing else ""
    order = role_order(design)
    ordered = sorted(estimate.items(), key=lambda item: order.index(item[0]))
    if shares_answers(design):
        _announce_candidates(design, ordered, pending, resumed, say)
        return
    say(f"fetching {reportfmt.count(pending, 'response')}{resumed}")
    for role, entry in ordered:
        cost = f", about {reportfmt.dollars(entry['cost'])}" if "cost" in entry else ""
        say(
            f"  estimate for the whole run, {role}: ~{entry['input_tokens']:.0f} input and "
            f"<= {entry['output_tokens']:.0f} output tokens{cost}"
        )


def _announce_candidates(
    design: DesignRecord,
    estimate: list[tuple[str, Mapping[str, float]]],
    pending: int,
    resumed: str,
    say: Callable[[str], None],
) -> None:
    """The same for a design of candidates: one answer per candidate and prompt (whatever the
    number of comparisons showing it), and the estimate one short line per candidate."""
    comparisons = reportfmt.count(len(design["arrangement"]), "comparison")
    say(
        f"fetching {reportfmt.count(pending, 'response')}{resumed}: one per candidate and "
        f"prompt, for {comparisons}"
    )
    say("  estimate for the whole run, per candidate:")
    width = max(len(role) for role, _ in estimate)
    for role, entry in estimate:
        cost = f", about {reportfmt.dollars(entry['cost'])}" if "cost" in entry else ""
        say(
            f"    {role:<{width}}  ~{entry['input_tokens']:,.0f} input and "
            f"<= {entry['output_tokens']:,.0f} output tokens{cost}"
        )
