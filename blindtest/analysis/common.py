"""What every protocol's analysis shares: options and result types, who the judge is
(person, bot, LLM), grouping picks by judge, the void statement and the similarity claim.
Pure; opens no file."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.model.assignment import share_of
from blindtest.model.judge_kinds import BOT_KINDS
from blindtest.model.people_sample import people_pool, people_trials
from blindtest.reportfmt import format_p_against, pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord, IntervalRecord, ReportRecord
from blindtest.stats import Interval, similarity_test
from blindtest.stats.similarity import SimilarityProtocol

if TYPE_CHECKING:
    from blindtest.model.picks import Pick


#: A bot whose excess over chance reaches this share of the judge's "largely explains" it.
EXPLAINS_SHARE = 0.75
#: Agreement is measured only over at least this many trials seen by two or more judges
#: (every trial, in a smaller design); with fewer, alpha's interval is too wide for its gate to
#: pass or fail on anything but noise.
MIN_SHARED_TRIALS = 10


@dataclass(frozen=True, slots=True)
class AnalysisOptions:
    """How the analysis reads the picks, as given (None: not given).

    ``min_kappa`` (``--min-kappa``): a stricter agreement rule the user chooses, Krippendorff's
    alpha below it fails the run; without it the gate fails only agreement not distinguishable
    from chance (`blindtest.stats.agreement.agreement_gate`). ``position_margin``
    (``--position-margin``): the margin of the position gate; None takes the design's
    (``bt-design --position-margin``), else `blindtest.stats.position.POSITION_MARGIN`."""

    min_kappa: float | None = None
    position_margin: float | None = None
    #: Show the full analysis of an unfinished fixed design (``--reveal-void``).
    reveal_void: bool = False
    #: A decision given to bt-analyze, not pre-registered (``--decide``, ``--champion``,
    #: ``--estimand``); the warning codes that make the exit 1 (``--fail-on``; ``--strict``:
    #: every warning); the per-tag decision (``--by-tag``). :mod:`blindtest.analysis.decision`.
    decide: str | None = None
    champion: str | None = None
    estimand: str | None = None
    fail_on: Sequence[str] = ()
    strict: bool = False
    by_tag: bool = False

    def decision_options(self) -> dict[str, Any]:
        """The decision options given, as ``analysis_options`` records them (none: {}, so a
        report without them keeps its keys)."""
        given: dict[str, Any] = {
            "decide": self.decide,
            "champion": self.champion,
            "estimand": self.estimand,
            "fail_on": list(self.fail_on) or None,
            "strict": self.strict or None,
            "by_tag": self.by_tag or None,
        }
        return {key: value for key, value in given.items() if value is not None}


def check_options(options: AnalysisOptions) -> None:
    """Refuse (BadInput, one line) options outside their range, before anything is read."""
    kappa = options.min_kappa
    if kappa is not None and not -1.0 <= kappa <= 1.0:  # NaN fails both comparisons
        raise BadInput(
            f"{option('min_kappa')} must be in [-1, 1] (Krippendorff's alpha), got {kappa:g}"
        )
    margin = options.position_margin
    if margin is not None and not 0.0 < margin < 0.5:
        raise BadInput(f"{option('position_margin')} must be in (0, 0.5), got {margin:g}")


def position_margin(design: Mapping[str, Any], options: AnalysisOptions) -> float:
    """The position gate's margin: the design's when it records one (``bt-design
    --position-margin``, fixed before any pick), the one given to the analysis otherwise, else
    `blindtest.stats.position.POSITION_MARGIN`. A different margin given at the analysis than
    the design fixed is refused: a margin chosen after seeing the picks is no margin."""
    from blindtest.stats.position import POSITION_MARGIN

    recorded = design.get("position_margin")
    given = options.position_margin
    if recorded is not None and given is not None and float(given) != float(recorded):
        raise BadInput(
            f"{option('position_margin')} {given:g}: the design fixes the position margin at "
            f"{float(recorded):g} (bt-design {option('position_margin')}); drop "
            f"{option('position_margin')}"
        )
    if recorded is not None:
        return float(recorded)
    return POSITION_MARGIN if given is None else float(given)


@dataclass(frozen=True, slots=True)
class AnalysisResult:
    report: ReportRecord
    exit_code: int
    e_values: list[JsonObject] = field(default_factory=list)


def interval(value: Interval) -> IntervalRecord:
    """``value.to_dict()`` as report.json's interval (stats/ does not know the artifact types)."""
    return cast(IntervalRecord, value.to_dict())


def judge_kind(pick: Pick) -> str | None:
    """``human``, ``bot``, ``llm`` or ``external`` as the pick records it; old files without
    ``judge_kind`` are ``bot`` when the pick says how a bot made it, else unknown (None)."""
    kind = getattr(pick, "judge_kind", None)
    if kind:
        return str(kind)
    return "bot" if pick.bot else None


def excluded_reason(pick: Pick) -> str | None:
    """Why an LLM judge left this comparison out of the aggregate (``identity_leakage``, or
    ``position_inconsistent`` under ``--inconsistent exclude``), None when it counts. An
    excluded comparison was judged (a fixed design is still finished) but is neither a win
    nor a tie: the report counts and lists it as excluded."""
    if pick.kind != "llm":
        return None
    reason = pick.extra.get("excluded")
    return str(reason) if reason else None


def _kinds(picks: Sequence[Pick]) -> set[str | None]:
    return {judge_kind(p) for p in picks}


def subject_of(picks: Sequence[Pick], judge: str) -> str:
    kinds = _kinds(picks)
    if kinds == {"bot"}:
        name = judge.removeprefix("bot:")
        return f"The {name} bot" if name in BOT_KINDS else f"The bot {judge!r}"
    if kinds == {"llm"}:
        return f"The LLM judge {judge!r}"
    if kinds == {"external"}:
        return f"The judge {judge!r}"
    return "You" if judge else "The judge"


def panel_noun(judges: Mapping[str, Sequence[Pick]]) -> str:
    """ "2 people", "2 bots", "2 LLM judges": a bot is never called a panel member."""
    kinds = _kinds([p for own in judges.values() for p in own])
    count = len(judges)
    nouns = {
        "human": ("person", "people"),
        "bot": ("bot", "bots"),
        "llm": ("LLM judge", "LLM judges"),
    }
    if len(kinds) == 1 and (kind := next(iter(kinds))) in nouns:
        singular, plural = nouns[kind]
        return f"{count} {singular if count == 1 else plural}"
    return reportfmt.count(count, "judge")


def prompts_by_trial(design: DesignRecord) -> dict[int, str]:
    return {e["trial"]: e["prompt_id"] for e in design["arrangement"]}


def by_judge(picks: Sequence[Pick]) -> dict[str, list[Pick]]:
    grouped: dict[str, list[Pick]] = defaultdict(list)
    for pick in picks:
        grouped[pick.judge].append(pick)
    return {judge: sorted(rows, key=lambda p: p.trial) for judge, rows in grouped.items()}


def share_size(design: DesignRecord, judge: str, own: Sequence[Pick]) -> int:
    """How many trials ``judge`` must judge: all, or the share a panel dealt it
    (``bt-judge --web --panel --per-judge``), re-derived from the design seed."""
    panel = next((p.extra["panel"] for p in own if isinstance(p.extra.get("panel"), dict)), None)
    if panel is None:
        return int(design["trials"])
    pool = people_pool(design) if "people_sample" in design else int(design["trials"])
    return len(share_of(str(design["seed"]), pool, judge, panel))


def planned_trials(design: DesignRecord) -> int:
    """The trials people must judge to finish the design: its people's sample's comparisons
    (``bt-design --people-sample``), else every trial."""
    sampled = people_trials(design)
    return len(sampled) if sampled is not None else int(design["trials"])


def finished_design(design: DesignRecord, judged: int) -> bool:
    """Whether ``judged`` trials finish the design: every planned one; with a people's sample
    whose missing rule is ``bound``, any (the estimate bounds the missing ones by the worst
    case, `blindtest.analysis.people_estimate`, and says so)."""
    if judged >= planned_trials(design):
        return True
    record = design.get("people_sample")
    return record is not None and record["missing"] == "bound" and judged > 0


#: What every void statement says after its count.
_FINISH = (
    "A fixed design must be finished; stopping early, or deciding when to stop after seeing how "
    "it goes, would void the p-value. Finish with bt-judge (it resumes where you stopped), or "
    "pre-register --sequential next time."
)


def void_statement(design: DesignRecord, judged: int) -> str:
    """The void statement: how many trials were judged, and nothing else about the picks."""
    whose = "the people's sample's " if "people_sample" in design else ""
    return f"Void: only {judged} of {whose}{planned_trials(design)} trials were judged. {_FINISH}"


def panel_void(design: DesignRecord, judges: Mapping[str, Sequence[Pick]]) -> str | None:
    """For a panel whose every reviewer must finish their trials (all of them, or the share
    ``--per-judge`` dealt them): None when each has, else the void statement, naming the
    reviewer furthest from finishing and counted against that reviewer's own trials."""
    counts = {judge: (len(own), share_size(design, judge, own)) for judge, own in judges.items()}
    short = {judge: count for judge, count in counts.items() if count[0] < count[1]}
    if not short:
        return None
    judge = min(short, key=lambda name: (short[name][0] - short[name][1], name))
    judged, share = short[judge]
    if share >= planned_trials(design):  # every reviewer judges every trial
        return void_statement(design, judged) + f" (judge {judge!r})"
    return (
        f"Void: judge {judge!r} judged only {judged} of the {share} trials dealt to them. "
        + _FINISH
    )


def similarity_claim(design: DesignRecord, correct: int, n: int) -> JsonObject | None:
    pd0 = design["similarity_pd0"]
    if pd0 is None or n == 0:
        return None
    alpha = design["alpha"]
    # Asked by the triangle and pair analyses only (the design refuses --similarity otherwise).
    protocol = cast(SimilarityProtocol, design["protocol"])
    result = similarity_test(correct, n, pd0, protocol=protocol, alpha=alpha)
    level = f"{100 * (1 - alpha):.0f}%"
    bound = f"the one-sided {level} upper bound on pd is {pct(result.pd_upper)}"
    test = f"exact test of pd >= {pct(pd0)}, {format_p_against(result.p_value, alpha)}"
    if result.similar:
        claim = (
            f"Similar within pd0 = {pct(pd0)} at {level}: {bound}, below pd0, so the data "
            f"exclude a difference visible on {pct(pd0)} or more of these prompts ({test})."
        )
    else:
        claim = (
            f"Similarity within pd0 = {pct(pd0)} was not shown: {bound}, not below pd0 ({test})."
        )
    return {**result.to_dict(), "statement": claim}
