"""``blindtest run``: design, generate, judge, audit and analyze in one go, under one lock;
the same call again resumes the directory.

The design must be the one the options make (the recorded seed is reused when none is
given); generation fetches only what is missing; the judge continues where they stopped (a
bot cut short starts over). An unfinished fixed design stops the chain before anything that
reveals a result. Each stage is its library function; what a caller shows between them comes
through :class:`RunHooks`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blindtest.analysis.stage import AnalyzeResult, analyze
from blindtest.auditing.stage import AuditResult, audit
from blindtest.designing.stage import DesignResult, design
from blindtest.errors import BadInput, option
from blindtest.generation.stage import GenerateResult, generate
from blindtest.judging.driver import judge_kind
from blindtest.judging.stage import JudgeResult, LlmSettings, default_judge_id, judge
from blindtest.pipeline.chain import judging_state, picks_judges, recorded_seed
from blindtest.rundir import artifacts, locking

if TYPE_CHECKING:
    from blindtest.generation.fetch import Progress
    from blindtest.transport.preflight import CheckResult

__all__ = ["RunHooks", "RunResult", "check", "run"]

HOLDER = "blindtest run"


def _nothing(*_: object) -> None:
    return None


@dataclass(frozen=True, slots=True)
class RunHooks:
    """What a caller shows as the chain goes: the design written (``designed``) and the
    items a ``from_dirs`` candidate lacked (``dropped``), generation's notes (``say``) and
    progress, a sitting's end (``judged``; before an LLM judge's failures stop the chain)."""

    dropped: Callable[[str, list[str]], None] | None = None
    designed: Callable[[DesignResult], None] = _nothing
    say: Callable[[str], None] = _nothing
    on_progress: Callable[[Progress, bool], None] | None = None
    judged: Callable[[JudgeResult], None] = _nothing
    echo: Callable[[str], None] = print


@dataclass(frozen=True, slots=True)
class RunResult:
    """How far the chain got: the design and generation; the sitting (None when the judge
    had already finished); ``judged`` of ``total`` trials for the judge ``judge_id``; and,
    once every trial is judged, the audit and the analysis (``exit_code`` is the analysis's:
    0 when the result can be acted on)."""

    run_dir: Path
    design: DesignResult
    generation: GenerateResult
    judge_id: str
    judged: int
    total: int
    sitting: JudgeResult | None = None
    audit: AuditResult | None = None
    analysis: AnalyzeResult | None = None

    @property
    def done(self) -> bool:
        return self.analysis is not None

    @property
    def exit_code(self) -> int:
        return self.analysis.exit_code if self.analysis is not None else 0


def two_models(
    models: Sequence[str], design_options: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    """A and B as given on the command line, or none for a design of candidates (named by
    ``candidate``, ``sides`` or three or more ``from_dirs``); anything else is BadInput."""
    several = bool(design_options.get("candidate")) or design_options.get("sides") is not None
    if several or len(design_options.get("from_dirs") or ()) > 2:
        if models:
            raise BadInput(
                f"{' '.join(models)}: a design of candidates names its models with "
                f"{option('candidate')} or {option('sides')}, not as A B"
            )
        return None, None
    if len(models) != 2:
        raise BadInput(
            "give the two models, A B (e.g. blindtest run gpt-5.4 gpt-5.4-mini), or "
            f"candidates with {option('candidate', 'NAME=MODEL')} or {option('sides', 'FILE')}"
        )
    return models[0], models[1]


def judge_name(kind: str, judge_id: str | None) -> str:
    """The name a chained judge's picks carry: the id given, else the kind's own (a bot's
    kind, an LLM judge's model), or the user's name."""
    return (judge_id or "").strip() or judge_kind(kind).default_id or default_judge_id()


def run(
    run_dir: str | os.PathLike[str],
    model_a: str | None = None,
    model_b: str | None = None,
    *,
    judge_kind: str = "human",
    judge_id: str | None = None,
    judge_url: str | None = None,
    judge_key_env: str | None = None,
    concurrency: int = 8,
    timeout: float = 120.0,
    prices: Mapping[str, str | None] | None = None,
    transport: Mapping[str, Any] | None = None,
    hooks: RunHooks | None = None,
    html: str | os.PathLike[str] | None = None,
    fail_on: Sequence[str] = (),
    strict: bool = False,
    **design_options: Any,
) -> RunResult:
    """Every stage in order into ``run_dir`` (``blindtest run A B``; no A B for a design of
    candidates, named by ``candidate=``, ``sides=`` or ``from_dirs=``). ``design_options``:
    the design's (:func:`blindtest.design`'s); ``transport``: generation's per-side options
    (``a_concurrency``, ``b_rpm``, ``a_header_env``...); ``judge_kind``: who judges
    (``llm:MODEL`` served at ``judge_url``, its key in ``judge_key_env``); ``html``: also
    write the report page there (as ``bt-analyze --html``), checked before anything is
    written; ``fail_on`` and ``strict``: warnings that make the analysis exit 1 (as
    ``bt-analyze --fail-on`` and ``--strict``), their codes checked before anything is
    written."""
    from blindtest.analysis.warnings import check_codes

    codes = check_codes(fail_on)
    if judge_kind.startswith("llm:"):  # before anything is written or paid for
        from blindtest.judging.llm.options import check_judge_key

        check_judge_key(judge_kind, judge_url, judge_key_env)
    else:
        from blindtest.judging.driver import judge_kind as known_kind

        known_kind(judge_kind)  # an unknown kind is refused before the design is written
    run_path = Path(run_dir)
    page = Path(html) if html is not None else None
    if page is not None:
        _check_page(page, run_path)
    show = hooks if hooks is not None else RunHooks()
    with locking.run_lock(run_path, HOLDER):
        designed = _design(run_path, model_a, model_b, design_options, show)
        show.designed(designed)
        generated = generate(
            run_path,
            concurrency=concurrency,
            timeout=timeout,
            prices=prices,
            say=show.say,
            on_progress=show.on_progress,
            holder=HOLDER,
            **dict(transport or {}),
        )
        name = judge_name(judge_kind, judge_id)
        sitting = None
        if not judging_state(run_path, name).done:
            sitting = _judge(run_path, judge_kind, judge_id, name, judge_url, judge_key_env, show)
        state = judging_state(run_path, name)
        result = RunResult(run_path, designed, generated, name, state.judged, state.total, sitting)
        if not state.done:
            return result
        audited = audit(run_path, force=True, holder=HOLDER)
        analysis = analyze(run_path, html=page, holder=HOLDER, fail_on=codes, strict=strict)
    return RunResult(
        run_path, designed, generated, name, state.judged, state.total, sitting, audited, analysis
    )


def _check_page(page: Path, run_dir: Path) -> None:
    """``--html FILE`` refused before the design is written or a request paid for: a
    directory, a run file's name, another artifact or a file not ours; an existing page only
    when this run directory has a report to replace it with (a resumed run)."""
    artifacts.claim_output(page, artifacts.HTML, force=True)
    if page.exists() and not (run_dir / artifacts.REPORT).exists():
        raise BadInput(
            f"{option('html', page)} already exists and this run has no report of its own to "
            "replace it with; give another file name"
        )


def _design(
    run_dir: Path,
    model_a: str | None,
    model_b: str | None,
    options: dict[str, Any],
    show: RunHooks,
) -> DesignResult:
    """Write the design, or find the same one already there (a resumed run)."""
    if options.get("seed") is None:
        options = {**options, "seed": recorded_seed(run_dir)}
    try:
        return design(
            run_dir,
            model_a=model_a,
            model_b=model_b,
            holder=HOLDER,
            on_dropped=show.dropped,
            **options,
        )
    except artifacts.DesignDiffers as error:
        raise BadInput(
            f"{error.path} differs: {error.difference}; resume it with the options that made "
            f"it, or give another {option('run_dir')}"
        ) from None


def _judge(
    run_dir: Path,
    kind: str,
    judge_id: str | None,
    name: str,
    url: str | None,
    key_env: str | None,
    show: RunHooks,
) -> JudgeResult:
    """One sitting of the chained judge; a bot cut short starts over."""
    restart = judge_kind(kind).mechanical and name in picks_judges(run_dir)
    llm = LlmSettings(url=url, key_env=key_env) if kind.startswith("llm:") else None
    resume: Sequence[str] = ["--judge", kind] if llm is not None else []
    sat = judge(
        run_dir,
        kind,
        judge_id=judge_id,
        force=restart,
        llm=llm,
        echo=show.echo,
        resume_options=resume,
        holder=HOLDER,
    )
    show.judged(sat)
    failure = sat.failure()
    if failure is not None:
        raise failure
    return sat


def check(
    run_dir: str | os.PathLike[str] | None,
    model_a: str | None = None,
    model_b: str | None = None,
    *,
    judge_kind: str = "human",
    judge_url: str | None = None,
    judge_key_env: str | None = None,
    timeout: float = 120.0,
    prices: Mapping[str, str | None] | None = None,
    transport: Mapping[str, Any] | None = None,
    **design_options: Any,
) -> CheckResult:
    """``blindtest run A B ... --check``: one small request per side (and to an LLM judge) of
    the design these options make (or the one ``run_dir`` already holds), and what each says
    (:mod:`blindtest.transport.preflight`). Nothing is written: the design is built in memory, no
    directory is made, no lock taken."""
    from blindtest.designing.stage import preview
    from blindtest.generation.check_run import design_targets
    from blindtest.generation.cost import parse_prices
    from blindtest.judging.stage import llm_options
    from blindtest.model.sides import parse_header_env
    from blindtest.transport.preflight import check_targets

    if run_dir is not None and (Path(run_dir) / artifacts.DESIGN).exists():
        run_path = Path(run_dir)
        document: Any = artifacts.load_design(run_path).design
    else:
        options = dict(design_options)
        if options.get("seed") is None:
            options["seed"] = "check"  # only the small request's seed comes from it
        document = preview(model_a=model_a, model_b=model_b, **options)
    given = parse_prices(dict(prices or {}))
    chosen = dict(transport or {})
    headers = {
        side: tuple(
            parse_header_env(option(f"{side.lower()}_header_env"), item)
            for item in chosen.get(f"{side.lower()}_header_env") or ()
        )
        for side in ("A", "B")
    }
    targets = design_targets(document, given, headers)
    if judge_kind.startswith("llm:"):
        from blindtest.judging.llm.check import design_judge_target

        _, judge = llm_options(judge_kind, LlmSettings(url=judge_url, key_env=judge_key_env))
        targets.append(design_judge_target(document, judge))
    return check_targets(targets, min(timeout, 60.0))
