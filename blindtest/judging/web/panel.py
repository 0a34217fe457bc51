"""A panel of reviewers on one judging page: ``bt-judge RUN --web --panel alice,bob,carol``.

Each reviewer gets a link with a random token of its own, judges the trials assigned to it
into ``RUN/picks-<name>.jsonl`` (one judge's sitting, :mod:`blindtest.judging.sitting`: the
same file handling, recorder, syncing and driver; one driver thread per reviewer) and sees its
own trials only. ``--per-judge N`` gives each reviewer N trials, dealt from the design seed
(``DesignRng(seed, "panel")``) so that every trial gets at least two reviewers whenever the
panel has the N x reviewers >= 2 x trials slots it needs (spec 001: spread the work, check
agreement); anyone holding the design can re-derive the assignment with
``blindtest.model.assignment.assign``; every pick carries ``panel`` (the reviewers, N and
``order``) so the analysis can. Each reviewer is asked its trials in an order of its own
(``blindtest.model.assignment.reviewer_order``: from the design seed and the reviewer's name),
so fatigue falls on different comparisons for each; bt-verify re-derives it. While the panel
runs, the operator's terminal says each reviewer's progress (counts only, never a pick) and
who has finished. Nothing is analysed here: results come from bt-analyze once the panel is
closed.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from blindtest import reportfmt
from blindtest.errors import BadInput, Interrupted, option
from blindtest.judging.driver import (
    Answer,
    JudgeKind,
    JudgingResult,
    Revise,
    Skip,
    Stop,
    TakeBack,
    Turn,
)
from blindtest.judging.sitting import OpenedPicks, open_picks, sit_opened
from blindtest.judging.web.links import LinkBook, picks_key
from blindtest.judging.web.reviewer import Reviewer
from blindtest.judging.web.server import (
    LOOPBACK,
    WEB,
    Echo,
    Page,
    ServerThread,
    hold_open,
    is_loopback_host,
    listen_again,
    network_warning,
    new_token,
    url_of,
)
from blindtest.model.assignment import REVIEWER_ORDER, assign, coverage, reviewer_order
from blindtest.model.people_sample import people_pool
from blindtest.model.picks import JudgeRun, Pick, judge_id_problem, judge_nicknames
from blindtest.rundir import artifacts, locking

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


def panel_names(text: str) -> tuple[str, ...]:
    """The reviewers of ``--panel a,b,c``: at least two, distinct, usable in a file name."""
    names = tuple(name.strip() for name in text.split(","))
    for name in names:
        if not _NAME.match(name) or judge_id_problem(name) is not None:
            raise BadInput(
                f"{option('panel')}: {name!r} is not a reviewer name; use letters, digits, "
                "'.', '_' or '-' (it names the file RUN/picks-<name>.jsonl)"
            )
    seen = {name.lower() for name in names}
    if len(seen) != len(names):
        raise BadInput(f"{option('panel')}: a reviewer is named twice; give each a name of its own")
    if len(names) < 2:
        raise BadInput(
            f"{option('panel')}: name two or more reviewers, e.g. {option('panel', 'alice,bob')}"
        )
    return names


def picks_path(run_dir: Path, name: str) -> Path:
    return run_dir / f"picks-{name}.jsonl"


class PanelJudge:
    """One reviewer of the panel as a ``Judge``: the page (shared by the panel) is served by
    ``judge_panel``, so the sitting holds nothing of its own."""

    def __init__(self, reviewer: Reviewer, panel: Mapping[str, object]) -> None:
        self.reviewer = reviewer
        self.panel = dict(panel)

    @property
    def kind(self) -> JudgeKind:
        return WEB

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        yield

    def judge(self, turn: Turn) -> Answer:
        pick = self.reviewer.ask(turn)
        if pick is None:
            return Stop()
        if isinstance(pick, (TakeBack, Skip)):
            return pick
        # The panel a pick was made in: the analysis re-derives this reviewer's share from it.
        if isinstance(pick, Revise):
            return Revise(tuple(self._marked(p) for p in pick.picks))
        return (self._marked(pick),)

    def _marked(self, pick: Pick) -> Pick:
        return replace(pick, extra={**pick.extra, "panel": self.panel})

    def end(self, result: JudgingResult) -> None:
        self.reviewer.finish(result)

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return ""


@dataclass
class Seat:
    """One reviewer's place in the panel: the page state, the file, what is left to judge."""

    reviewer: Reviewer
    out: Path
    assigned: tuple[int, ...]
    opened: OpenedPicks
    earlier: tuple[Pick, ...] = ()
    #: The order this reviewer is asked its trials in (its own: seed and name).
    order: tuple[int, ...] = ()
    result: JudgingResult | None = None
    failed: BaseException | None = None
    judged: int = 0
    thread: threading.Thread | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class PanelResult:
    """How each reviewer's sitting ended: (name, picks file, judged, assigned)."""

    seats: tuple[tuple[str, Path, int, int], ...]
    complete: bool


def judge_panel(
    run: JudgeRun,
    names: Sequence[str],
    *,
    per_judge: int | None,
    force: bool,
    host: str = LOOPBACK,
    port: int = 0,
    session_cap: int = 30,
    echo: Echo = print,
    open_link: Callable[[str], object] | None = None,
) -> PanelResult:
    """Serve the page for every reviewer until each has judged its trials (or Ctrl-C)."""
    view = run.view
    if view.sequential:
        raise BadInput(
            f"{option('panel')}: a sequential design stops on one judge's evidence; judge it "
            "with one reviewer (bt-judge RUN --web)"
        )
    pool = people_pool(run.design)  # every trial, or the people's sample
    assignment = assign(run.seed, pool, names, per_judge)
    plain = bool(run.design["normalization"]["strip_formatting"])
    inputs = [run.run_dir / artifacts.DESIGN, run.run_dir / artifacts.TRIALS]
    book = LinkBook(run.run_dir)
    with ExitStack() as stack:
        seats = []
        for name in names:
            out = picks_path(run.run_dir, name)
            artifacts.claim_output(out, "picks", force=True, inputs=inputs, same_inputs=True)
            stack.enter_context(locking.file_lock(out, "bt-judge --panel"))
            opened = open_picks(run, WEB, name, out, force)
            existing = opened.existing
            reviewer = Reviewer(
                view,
                name,
                new_token(),
                nicknames=judge_nicknames(existing.picks, name),
                session_cap=session_cap,
                total=len(assignment[name]),
                earlier_links=book.hashes(name, picks_key(run.run_dir, out)),
                pick_ids=existing.pick_ids_of(name),
            )
            earlier = (*existing.answered, *existing.later_passes)
            order = reviewer_order(run.seed, name, assignment[name])
            seat = Seat(reviewer, out, assignment[name], opened, earlier, order)
            seats.append(seat)
        server = _serve(run, seats, book, host, port, plain, echo)
        stack.callback(server.stop)
        _announce(seats, host, server.port, assignment, pool, echo, open_link)
        marker = {"reviewers": list(names), "per_judge": per_judge, "order": REVIEWER_ORDER}
        watch = Watch(seats, echo)
        for seat in seats:
            seat.thread = threading.Thread(
                target=_sit,
                args=(run, seat, marker, watch),
                name=f"bt-judge-{seat.reviewer.judge_id}",
            )
            seat.thread.start()
        try:
            _wait(seats)
        except KeyboardInterrupt:
            for seat in seats:
                seat.reviewer.stop()
            _wait(seats)
            raise Interrupted(
                f"interrupted; {_saved(seats)}; rerun the same command to go on"
            ) from None
        for seat in seats:
            if seat.failed is not None:
                raise seat.failed
        result = PanelResult(
            tuple((s.reviewer.judge_id, s.out, s.judged, len(s.assigned)) for s in seats),
            complete=all(s.judged >= len(s.assigned) for s in seats),
        )
        if any(s.reviewer.asked for s in seats):  # the last reviewer's end screen
            hold_open([s.reviewer for s in seats], echo)
    return result


def _serve(
    run: JudgeRun,
    seats: Sequence[Seat],
    book: LinkBook,
    host: str,
    port: int,
    plain: bool,
    echo: Echo,
) -> ServerThread:
    """Start the page for every seat: on the port of the links given before when it is free,
    each new link's hash recorded in ``RUN/web-links.jsonl``."""
    keys = [(s.reviewer.judge_id, picks_key(run.run_dir, s.out)) for s in seats]
    sock, note = listen_again(host, port, book.last_port(keys))
    server = ServerThread(Page([s.reviewer for s in seats], plain=plain).app(), sock)
    server.start()
    for seat, key in zip(seats, keys, strict=True):
        book.record(*key, seat.reviewer.token, server.port)
    if note:
        echo(note)
    return server


def _announce(
    seats: Sequence[Seat],
    host: str,
    port: int,
    assignment: Mapping[str, Sequence[int]],
    pool: Sequence[int],
    echo: Echo,
    open_link: Callable[[str], object] | None,
) -> None:
    if not is_loopback_host(host):
        echo(network_warning(host, "a link"))
    counts = coverage(assignment, pool)
    total = len(pool)
    fewest = min(counts.values())
    for seat in seats:
        name = seat.reviewer.judge_id
        url = url_of(host, port, seat.reviewer.token)
        echo(f"{name} ({reportfmt.count(len(seat.assigned), 'trial')}): open {url}")
        if open_link is not None:
            open_link(url)
    if fewest < 2:
        alone = sum(1 for n in counts.values() if n < 2)
        echo(
            f"note: {alone} of {total} trials get fewer than two reviewers; agreement needs "
            "a larger --per-judge or more reviewers"
        )
    echo(
        f"Every trial gets {fewest} or more reviewers. Send each reviewer their own link; "
        "leave this running until all are done (Ctrl-C stops; picks are kept)."
    )
    if any(len(s.reviewer.token_hashes) > 1 for s in seats):
        echo("Links given before to these reviewers work too.")


class Watch:
    """The operator's view of a running panel: a line with every reviewer's count whenever one
    of them has judged another tenth of its share, and a line when one finishes. Counts only:
    never a pick, a reason or a trial number. Told from each reviewer's thread."""

    def __init__(self, seats: Sequence[Seat], echo: Echo) -> None:
        self._echo = echo
        self._lock = threading.Lock()
        self._counts = {s.reviewer.judge_id: _judged_of(s) for s in seats}
        self._shares = {s.reviewer.judge_id: len(s.assigned) for s in seats}

    def judged(self, name: str, count: int) -> None:
        with self._lock:
            if count <= self._counts[name]:
                return  # a change of an earlier pick: the count stands
            self._counts[name] = count
            share = self._shares[name]
            step = max(1, share // 10)
            if count == share:
                self._echo(f"{name} has finished ({count} of {share}). {self._line()}")
            elif count % step == 0:
                self._echo(self._line())

    def _line(self) -> str:
        parts = []
        for name, count in self._counts.items():
            share = self._shares[name]
            parts.append(f"{name} {count} of {share}" + (" (done)" if count == share else ""))
        return "progress: " + ", ".join(parts)


def _judged_of(seat: Seat) -> int:
    name = seat.reviewer.judge_id
    return len({p.trial for p in seat.earlier if p.judge == name and p.trial in seat.assigned})


def _sit(run: JudgeRun, seat: Seat, panel: Mapping[str, object], watch: Watch) -> None:
    """One reviewer's sitting, as one judge's (:func:`blindtest.judging.sitting.sit_opened`): the
    same recorder, syncing and stamping; just the trials assigned to the reviewer, in its own
    order."""
    name = seat.reviewer.judge_id
    judged = {p.trial for p in seat.earlier if p.judge == name and p.trial in seat.assigned}

    def recorded(record: Mapping[str, object]) -> None:
        if record.get("skipped") is True:
            return  # put off: not judged
        judged.add(int(str(record["trial"])))
        watch.judged(name, len(judged))

    try:
        seat.result = sit_opened(
            run,
            WEB,
            PanelJudge(seat.reviewer, panel),
            seat.opened,
            only=seat.assigned,
            on_record=recorded,
            order=seat.order,
        )
        seat.reviewer.finish(seat.result)
    except BaseException as err:  # handed to the main thread
        seat.failed = err
        seat.reviewer.stop()
    finally:
        seat.judged = len(judged)


def _wait(seats: Sequence[Seat]) -> None:
    for seat in seats:
        assert seat.thread is not None
        while seat.thread.is_alive():
            seat.thread.join(0.2)  # short joins: Ctrl-C reaches the main thread


def _saved(seats: Sequence[Seat]) -> str:
    return (
        ", ".join(f"{s.reviewer.judge_id} {s.judged} of {len(s.assigned)}" for s in seats)
        + " judged and saved"
    )
