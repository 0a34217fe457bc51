"""The judging stage: RUN/trials.jsonl -> a picks file (RUN/picks.jsonl by default), judged
by a person (in the terminal or on a page), a bot, or an LLM judge (live, or through a batch
file): :func:`judge`; a panel of reviewers on one page, each into a file of their own:
:func:`judge_panel`; an external judge's picks checked against the design and trials:
:func:`check_picks`; an LLM judge's endpoint asked one small request: :func:`check_judge`.
One sitting: :func:`blindtest.judging.sitting.sit`; the judge kinds:
:mod:`blindtest.judging.driver`.
"""

from __future__ import annotations

import getpass
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from blindtest import reportfmt
from blindtest.errors import BadInput, EndpointFailed, option
from blindtest.judging import sitting
from blindtest.judging.driver import JudgeKind, JudgingResult, judge_kind
from blindtest.model.picks import JudgeRun, judge_id_problem, load_judge_run, load_picks
from blindtest.present.hints import stage_command
from blindtest.rundir import artifacts
from blindtest.rundir.locking import holding_picks, run_holder
from blindtest.transport.retry import DEFAULT_POLICY

if TYPE_CHECKING:
    from blindtest.judging.llm.options import LlmOptions
    from blindtest.transport.preflight import CheckResult

__all__ = [
    "JudgeResult",
    "LlmSettings",
    "PanelJudgeResult",
    "PicksCheck",
    "check_judge",
    "check_picks",
    "default_judge_id",
    "judge",
    "judge_name",
    "judge_panel",
    "llm_options",
]

Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class LlmSettings:
    """An LLM judge's settings (``bt-judge --judge llm:MODEL``'s options, by their Python
    names): where it is served, how it is asked, and what a preference verdict needs."""

    url: str | None = None
    key_env: str | None = None
    temperature: float = 0.0
    template: Path | None = None
    concurrency: int = 8
    rpm: float | None = None
    timeout: float = 120.0
    max_retries: int = DEFAULT_POLICY.max_retries
    price: str | None = None
    swap: bool = True
    inconsistent: str = "tie"
    min_confidence: float = 0.7
    context_tokens: int = 128_000


@dataclass(frozen=True, slots=True)
class JudgeResult:
    """How one sitting ended: the picks file, who judged, how far (``judged`` of ``total``
    trials for this judge, ``judged_now`` in this sitting; ``complete`` when every trial is
    judged or the sequential rule stopped), comparisons an LLM judge failed to get answered
    (recorded as failure rows; a rerun asks them again), and the judge's closing line (what
    the command prints; never a score). ``result`` is None for a batch export or import."""

    run_dir: Path
    out: Path
    judge_id: str
    kind: str
    result: JudgingResult | None
    failed: int
    closing: str
    resume: str

    @property
    def judged(self) -> int:
        return self.result.judged if self.result is not None else 0

    @property
    def total(self) -> int:
        return self.result.total if self.result is not None else 0

    @property
    def complete(self) -> bool:
        return self.result is not None and self.result.status in ("complete", "stopped")

    def failure(self) -> EndpointFailed | None:
        """The error a sitting with failed comparisons ends with (``bt-judge`` exits 3)."""
        if not self.failed:
            return None
        return EndpointFailed(
            f"{_count(self.failed, 'comparison')} failed and recorded as failure rows in "
            f"{self.out}; rerun {self.resume} to ask only those"
        )


def _count(n: int, word: str) -> str:
    return reportfmt.count(n, word)


def default_judge_id() -> str:
    """The user's name, for a person who gives none."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no user name in the environment or passwd
        return "judge"


def judge_name(judge_id: str | None, chosen: JudgeKind) -> str:
    """``judge_id``, else the kind's own id (a bot's kind), else the user's name; checked."""
    name = (judge_id if judge_id is not None else "").strip()
    if not name:
        name = chosen.default_id or default_judge_id()
    problem = judge_id_problem(name)
    if problem is not None:
        raise BadInput(f"{option('judge_id')}: {problem}")
    return name


def _default_of(judge_id: str | None, chosen: JudgeKind) -> str | None:
    """Where the judge id came from when none was given (None when it was)."""
    if judge_id is not None and judge_id.strip():
        return None
    if chosen.default_id is None:
        return "your user name"
    return f"the default for {option('kind', chosen.name)}"


def llm_options(kind: str, settings: LlmSettings) -> tuple[JudgeKind, LlmOptions]:
    """The ``llm:MODEL`` judge kind from its settings (all checked here: ``BadInput``,
    nothing written, no call)."""
    from blindtest.judging.llm import prompts as judge_prompts
    from blindtest.judging.llm.judge import llm_kind
    from blindtest.judging.llm.options import DEFAULT_URL, LlmOptions, parse_price, resolve_key_env

    model = kind.removeprefix("llm:").strip()
    if not model:
        raise BadInput(
            f"{option('kind', 'llm:MODEL')}: name the judge model, e.g. "
            f"{option('kind', 'llm:gpt-4o')}"
        )
    confidence = settings.min_confidence
    if not (math.isfinite(confidence) and 0.0 <= confidence <= 1.0):
        raise BadInput(
            f"{option('llm.min_confidence')}: expected a number in [0, 1], got {confidence}"
        )
    template = None
    if settings.template is not None:
        path = Path(settings.template)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise BadInput(f"{option('llm.template', path)}: cannot read it ({error})") from None
        template = judge_prompts.parse_template(text, str(path))
    options = LlmOptions(
        model=model,
        base_url=settings.url or DEFAULT_URL,
        key_env=resolve_key_env(settings.key_env, os.environ),
        temperature=settings.temperature,
        concurrency=settings.concurrency,
        rpm=settings.rpm,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        price=parse_price(settings.price),
        template=template,
        swap=settings.swap,
        min_confidence=confidence,
        inconsistent=settings.inconsistent,
        context_tokens=settings.context_tokens,
    )
    options.endpoint()  # the URL and model are checked now
    return llm_kind(options), options


def check_judge(
    run_dir: str | os.PathLike[str], kind: str, llm: LlmSettings | None = None
) -> CheckResult:
    """``bt-judge RUN --judge llm:MODEL --check``: one small request to the LLM judge and
    what it says (:mod:`blindtest.transport.preflight`), against RUN's blinded trials. Writes
    nothing to RUN, takes no lock."""
    from blindtest.judging.llm.check import judge_target
    from blindtest.transport.preflight import check_targets

    if not kind.startswith("llm:"):
        raise BadInput(
            f"{option('check', True)} without a file checks an LLM judge's endpoint "
            f"({option('kind', 'llm:MODEL')}), not {kind}; give {option('check', 'FILE')} to "
            "validate an external judge's picks"
        )
    _, options = llm_options(kind, llm if llm is not None else LlmSettings())
    target = judge_target(load_judge_run(Path(run_dir)), options)
    return check_targets([target], min(options.timeout, 60.0))


@dataclass(frozen=True, slots=True)
class PicksCheck:
    """An external judge's picks file, checked against RUN's design and trials
    (``bt-judge RUN --check FILE``): how many picks count, by which judges, how many records
    corrected an earlier pick, and the line number of an incomplete final line (ignored)."""

    path: Path
    protocol: str
    design_sha256: str
    picks: int
    judges: tuple[str, ...]
    corrections: int
    torn_line: int | None
    #: "Both are bad" answers (abstentions, not picks) and skip records.
    both_bad: int = 0
    skips: int = 0

    @property
    def summary(self) -> str:
        """The one line ``bt-judge --check FILE`` prints."""
        names = ", ".join(self.judges[:5]) + (", ..." if len(self.judges) > 5 else "")
        by = f" by {_count(len(self.judges), 'judge')} ({names})" if self.judges else ""
        fixed = f", {_count(self.corrections, 'correction')} applied" if self.corrections else ""
        bad = f", {self.both_bad} both bad" if self.both_bad else ""
        skips = f", {_count(self.skips, 'skip')}" if self.skips else ""
        torn = f"; incomplete final line {self.torn_line} ignored" if self.torn_line else ""
        return (
            f"{self.path}: {_count(self.picks, 'pick')}{bad}{skips}{by}{fixed}, valid for "
            f"{self.protocol} design {self.design_sha256[:12]}{torn}"
        )


def check_picks(run_dir: str | os.PathLike[str], path: str | os.PathLike[str]) -> PicksCheck:
    """Validate ``path``, an external judge's picks, against RUN's design and trials: every
    record's schema, trial numbers, picks in the protocol's range, corrections; ``BadInput``
    naming the file and line of the first problem. Reads only: writes nothing, takes no
    lock."""
    run, picks = load_picks(Path(run_dir), Path(path))
    return PicksCheck(
        path=Path(path),
        protocol=run.view.protocol,
        design_sha256=run.design_sha256,
        picks=len(picks.picks),
        judges=picks.judges,
        corrections=picks.corrections,
        torn_line=picks.torn_line,
        both_bad=len(picks.abstentions),
        skips=len(picks.skips),
    )


@dataclass(frozen=True, slots=True)
class PanelJudgeResult:
    """How a panel's sitting ended: per reviewer (name, picks file, judged, assigned), whether
    every reviewer has judged every trial assigned to them, and the line the command prints."""

    run_dir: Path
    seats: tuple[tuple[str, Path, int, int], ...]
    complete: bool
    closing: str


def judge_panel(
    run_dir: str | os.PathLike[str],
    panel: str | Sequence[str],
    *,
    per_judge: int | None = None,
    force: bool = False,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    session_cap: int = 30,
    echo: Say = print,
    holder: str | None = None,
) -> PanelJudgeResult:
    """A panel of reviewers on one judging page (``bt-judge RUN --web --panel a,b``): each
    gets a link, judges the trials dealt to them (``per_judge`` each, from the design seed;
    default all) into RUN/picks-<name>.jsonl, until all are done or Ctrl-C
    (:mod:`blindtest.judging.web.panel`). ``panel``: the names, or them comma-separated.

    As with one judge, RUN/picks.jsonl is claimed and locked while the panel sits (each
    reviewer's file too). ``echo`` gets what the page prints (the links)."""
    import webbrowser

    from blindtest.judging.web.panel import judge_panel as sit_panel
    from blindtest.judging.web.panel import panel_names

    run_path = Path(run_dir)
    names = panel_names(panel if isinstance(panel, str) else ",".join(panel))
    with holding_picks(run_path, run_path / artifacts.PICKS, holder):
        ended = sit_panel(
            load_judge_run(run_path),
            names,
            per_judge=per_judge,
            force=force,
            host=host,
            port=port,
            session_cap=session_cap,
            echo=echo,
            open_link=webbrowser.open if open_browser else None,
        )
    done = ", ".join(f"{name} {n} of {of}" for name, _, n, of in ended.seats)
    if ended.complete:
        files: list[str | Path] = []
        for _, path, _, _ in ended.seats:
            files += ["--picks", path]
        closing = (
            f"The panel is closed: {done} judged. Run "
            f"{stage_command('analyze', run_path, *files)} to see the result and the "
            "reviewers' agreement."
        )
    else:
        closing = f"Stopped: {done} judged and saved; run the same command again to go on."
    return PanelJudgeResult(run_path, ended.seats, ended.complete, closing)


def _choose(kind: str, llm: LlmSettings | None) -> tuple[JudgeKind, LlmOptions | None]:
    if kind.startswith("llm:"):
        return llm_options(kind, llm if llm is not None else LlmSettings())
    if llm is not None:
        raise BadInput(f"LLM settings are only for an llm:MODEL judge, not {kind}")
    return judge_kind(kind), None


def _loaded(run_dir: Path) -> JudgeRun:
    """The run to judge; while a stage still writes it (bt-generate holds its lock), that is
    said rather than that its trials are missing."""
    try:
        return load_judge_run(run_dir)
    except BadInput:
        running = run_holder(run_dir)
        if running is None:
            raise
        raise BadInput(
            f"{run_dir} is still being written by {running}: wait for it to finish, then run "
            "bt-judge again"
        ) from None


def judge(
    run_dir: str | os.PathLike[str],
    kind: str = "human",
    *,
    judge_id: str | None = None,
    out: str | os.PathLike[str] | None = None,
    force: bool = False,
    llm: LlmSettings | None = None,
    batch_export: str | os.PathLike[str] | None = None,
    batch_import: Sequence[str | os.PathLike[str]] = (),
    batch: bool = False,
    batch_format: str = "openai",
    poll_interval: float = 10.0,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = True,
    session_cap: int = 30,
    echo: Say = print,
    say: Say | None = None,
    show: Say | None = None,
    batch_progress: Callable[[str, bool], None] | None = None,
    resume_options: Sequence[str | os.PathLike[str]] | None = None,
    holder: str | None = None,
) -> JudgeResult:
    """Judge RUN's blinded trials into ``out`` (default RUN/picks.jsonl; ``bt-judge``).

    ``kind``: ``human`` (this terminal), ``web`` (a local page at ``host``:``port``), a bot
    (``bot:length``...) or ``llm:MODEL`` (with ``llm``, its :class:`LlmSettings`; an LLM
    judge may instead export, import or submit a batch: ``batch_export``, ``batch_import``,
    ``batch``). A judge resumes where it stopped; ``force`` starts the file again. A picks
    file holding another kind of judge's picks, or this judge's made with other settings,
    is refused.

    Claims and locks ``out`` (not the run: judges writing separate files judge at once).
    ``echo`` gets what the judging page prints (its link); ``say`` the batch modes' notes
    and ``show`` their summary; ``resume_options``: what a rerun's command line needs
    besides the run, ``--judge-id``, ``--out`` and ``--web`` (shown by the judge; default
    ``--judge KIND`` for a bot or an LLM judge). An LLM judge's failed comparisons are in
    ``JudgeResult.failed`` (``failure()`` is the error the command exits 3 with)."""
    run_path = Path(run_dir)
    out_path = Path(out) if out is not None else run_path / artifacts.PICKS
    tell: Say = say if say is not None else (lambda _: None)
    chosen, options = _choose(kind, llm)
    with holding_picks(run_path, out_path, holder):
        run = _loaded(run_path)
        modes = (batch_export is not None, bool(batch_import), batch)
        if sum(modes) > 1:
            raise BadInput(
                f"give one of {option('batch_export')}, {option('batch_import')} and "
                f"{option('batch')}"
            )
        if any(modes) and options is None:
            raise BadInput(
                f"{option('batch_export')}, {option('batch_import')}, {option('batch')}: only "
                f"for {option('kind', 'llm:MODEL')}"
            )
        if options is not None:
            from blindtest.judging.llm.messages import check_run

            check_run(options, run, key=not any(modes) or batch)
        name = judge_name(judge_id, chosen)
        default_of = _default_of(judge_id, chosen)
        given = _default_options(kind) if resume_options is None else resume_options
        again: list[str | Path] = [run_path]
        again += [w if isinstance(w, str) else Path(w) for w in given]
        again += _own_args(judge_id, name, out_path if out is not None else None, kind)
        command = stage_command("judge", *again)
        if any(modes):
            assert options is not None
            mode = (
                Path(batch_export) if batch_export is not None else None,
                [Path(p) for p in batch_import],
                batch_format,
                poll_interval,
                batch_progress,
            )
            shown: Say = show if show is not None else (lambda _: None)
            _judge_batch(run, options, name, out_path, force, again, default_of, tell, shown, mode)
            return JudgeResult(run_path, out_path, name, chosen.name, None, 0, "", command)
        page = {
            "host": host,
            "port": port,
            "open_browser": open_browser,
            "session_cap": session_cap,
            "echo": echo,
        }
        args = (run, chosen, name, out_path, force, command, page)
        sat, ended = sitting.sit(*args, default_of=default_of)
    closing = sat.closing(ended, out_path, sitting.analyze_command(run_path, out_path))
    failed = int(getattr(sat, "failed", 0))
    return JudgeResult(run_path, out_path, name, chosen.name, ended, failed, closing, command)


def _default_options(kind: str) -> list[str | Path]:
    """What a rerun needs to name the judge, when the caller says nothing else."""
    return [] if kind in ("human", "web") else ["--judge", kind]


def _own_args(judge_id: str | None, name: str, out: Path | None, kind: str) -> list[str | Path]:
    """What a rerun of this judge needs besides the run and the LLM options."""
    args: list[str | Path] = []
    if judge_id is not None:
        args += ["--judge-id", name]
    if out is not None:
        args += ["--out", out]
    if kind == "web":
        args += ["--web"]
    return args


def _judge_batch(
    run: JudgeRun,
    options: LlmOptions,
    judge_id: str,
    out: Path,
    force: bool,
    again: list[str | Path],
    default_of: str | None,
    say: Say,
    show: Say,
    mode: tuple[Path | None, list[Path], str, float, Callable[[str, bool], None] | None],
) -> None:
    """An LLM judge's batch mode (:mod:`blindtest.judging.llm.batch`)."""
    from blindtest.judging.llm import batch as core
    from blindtest.judging.llm.batch_requests import check_batchable

    export, imports, fmt, poll_interval, progress = mode
    work = core.JudgeBatch(run, options, judge_id, out, force, again, default_of)
    check_batchable(run.view.protocol)
    if export is not None:
        core.export(work, export, fmt, say)
    elif imports:
        core.import_files(work, imports, say, show)
    else:
        from blindtest.transport.batch_run import check_submittable

        check_submittable(fmt)
        core.submit(work, options.timeout, poll_interval, progress, say, show)
