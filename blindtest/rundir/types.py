"""The artifacts at the JSON boundary as ``TypedDict``s, mirroring ``schemas/*.schema.json``: what
a stage reads and writes is typed, so ``mypy --strict`` catches a misspelt key.

Each schema's required properties are plain keys of a base class and its optional ones the
keys of a ``total=False`` subclass (the idiom that needs no ``typing.Required``, which Python
3.10 lacks); ``tests/rundir/test_artifact_types.py`` compares both key sets with the schemas, so
the two cannot drift. A property added to a schema is added here too. Nested objects are typed
where the code looks keys up in them (the judging block, an arrangement entry, usage, an
interval) and left ``dict[str, Any]`` where they are passed on whole.

Type declarations only: no function, no I/O. The schemas stay the one check at run time
(``artifacts.validate``); a loader that has validated a file ``cast``s it to its type here.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

__all__ = [
    "AnalysisFields",
    "ArrangementEntry",
    "AuditRecord",
    "DesignJudging",
    "DesignPairing",
    "DesignRecord",
    "GenerationRecord",
    "IntervalRecord",
    "PeopleSampleRecord",
    "PickRecord",
    "ProtocolFields",
    "ProtocolName",
    "ReportRecord",
    "ResponseRow",
    "TrialRecord",
    "UsageRecord",
]

ProtocolName = Literal["triangle", "pair", "preference"]

# --------------------------------------------------------------------------- common.schema.json


class UsageRecord(TypedDict, total=False):
    """``$defs/usage``: token counts as the server reported them (null when it did not)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None


class IntervalRecord(TypedDict):
    """``$defs/interval``: an estimate and its confidence bounds."""

    estimate: float | None
    lo: float | None
    hi: float | None


# --------------------------------------------------------------------------- design.schema.json


class _DesignJudgingRequired(TypedDict):
    question: str
    extra_questions: list[str]
    require_reason: bool


class DesignJudging(_DesignJudgingRequired, total=False):
    """``judging``: what every judge is asked. ``extra_questions`` are asked once per
    comparison, ``extra_questions_per_option`` (absent when there are none) of each option."""

    extra_questions_per_option: list[str]


class _ArrangementRequired(TypedDict):
    trial: int
    prompt_id: str


class ArrangementEntry(_ArrangementRequired, total=False):
    """One item of ``arrangement``: ``doubled`` and ``odd_position`` (triangle) or ``left``;
    ``control`` (preference) marks a hidden control, both outputs drawn from that side;
    ``planted`` a comparison of the sensitivity check (``blindtest.model.planted``). With
    candidates, ``left`` and ``right`` name the two candidates shown."""

    doubled: str
    odd_position: int
    left: str
    right: str
    control: str
    planted: dict[str, Any]


class DesignPairing(TypedDict):
    """``pairing`` of a several-candidate design: the schedule's version and ``--pairs``."""

    version: str
    mode: str


class PeopleSampleRecord(TypedDict):
    """``people_sample``: the prompts people judge, drawn from the seed
    (:mod:`blindtest.model.people_sample`)."""

    version: str
    size: int
    by: Literal["uniform", "tag"]
    judge_prediction: Literal["verdict", "confidence"]
    missing: Literal["void", "bound"]
    prompts: list[str]


class _DesignRequired(TypedDict):
    schema: str
    protocol: ProtocolName
    trials: int
    seed: str
    rng: str
    alpha: float
    sequential: bool
    similarity_pd0: float | None
    demo: bool
    source: dict[str, Any]
    models: dict[str, Any]
    system: str | None
    normalization: dict[str, Any]
    judging: DesignJudging
    prompts: list[dict[str, Any]]
    arrangement: list[ArrangementEntry]
    provenance: dict[str, Any]


class DesignRecord(_DesignRequired, total=False):
    """``design.json``: ``controls``, ``derived_from`` (a design made ``--from`` another
    without some trials: :mod:`blindtest.model.derived`), ``candidates`` with ``pairing`` (a
    several-candidate design: :mod:`blindtest.model.candidates`), ``people_sample`` (the
    prompts people judge: :mod:`blindtest.model.people_sample`) and ``position_margin`` (the
    position gate's margin, ``bt-design --position-margin``) are the optional properties."""

    controls: int
    derived_from: dict[str, Any]
    candidates: list[str]
    pairing: DesignPairing
    position_margin: float
    people_sample: PeopleSampleRecord
    decision: dict[str, Any]


# --------------------------------------------------------------------------- responses.schema.json


class _ResponseRequired(TypedDict):
    schema: str
    trial: int
    slot: int
    side: str
    model: str
    status: Literal["ok", "failed"]
    text: str | None
    finish_reason: str | None
    usage: UsageRecord | None
    latency_ms: float | None
    attempts: int


class ResponseRow(_ResponseRequired, total=False):
    """One line of ``responses.jsonl`` (``reused_from``: an answer copied from the run a
    derived design was made from)."""

    reused_from: dict[str, Any]

    raw_text: str
    refusal: str | None
    error: str | None
    stage: Literal["generate", "launder"]
    kind: str
    truncated: bool
    seed: int | None
    prompt_id: str
    served_model: str | None
    request_sha256: str
    source_sha256: str
    reasoning: str
    identity_stripped: dict[str, int]


# --------------------------------------------------------------------------- trials.schema.json


class HistoryTurn(TypedDict):
    """A conversation's earlier turn, as the judge sees it."""

    role: str
    content: str


class _TrialRequired(TypedDict):
    schema: str
    trial: int
    prompt: str
    options: list[str]


class TrialRecord(_TrialRequired, total=False):
    """One line of ``trials.jsonl``: the blinded view (no model, no side)."""

    history: list[HistoryTurn]


# --------------------------------------------------------------------------- picks.schema.json


class _PickRequired(TypedDict):
    schema: str
    trial: int
    judge: str
    pick: int | str


# "pass" is a Python keyword, so the optional keys are declared in the functional form.
_PickOptional = TypedDict(
    "_PickOptional",
    {
        "reason": "str | None",
        "confidence": "float | None",
        "at": "str | None",
        "nicknames": "list[str]",
        "answers": "dict[str, bool | dict[str, bool]]",
        "bot": "dict[str, Any]",
        "judge_kind": "Literal['human', 'bot', 'llm', 'external']",
        "design_sha256": str,
        "correction": bool,
        "pass": int,
        # Made by the judging page: a pick sent twice is recorded once.
        "pick_id": str,
        # A skip record (no pick: the trial was put off).
        "skipped": bool,
        # An LLM judge's records.
        "failed": bool,
        "error": str,
        # A failure row's one answered pass of a swap (reused by the rerun; never a pick).
        "answered_pass": "dict[str, Any]",
        "comparison_id": str,
        "judge_model": str,
        "judge_origin": str,
        "excluded": str,
        "position_mapping": "dict[str, Any]",
        "verdict": "str | int",
        "pass_pick": "int | str",
        "key_differentiators": "list[str]",
        "identity_leakage": bool,
        "identity_leakage_details": "str | None",
        "tie_reason": "str | None",
        "position_consistent": bool,
        "flagged": "list[str]",
        "raw_response": str,
        "attempts": int,
        "tokens": "dict[str, Any]",
        "cost": float,
        # A web panel's pick.
        "panel": "dict[str, Any]",
        # A machine judge's settings (model, URL, temperature, template, ...) and their hash:
        # a resume with other settings is refused.
        "judge_settings": "dict[str, Any]",
        "judge_settings_sha256": str,
    },
    total=False,
)


class PickRecord(_PickRequired, _PickOptional):
    """One line of ``picks.jsonl``."""


# --------------------------------------------------------------------------- audit.schema.json


class _Stamped(TypedDict):
    """What every derived document starts with: its schema tag and the design it was made
    from (audit, generation, report)."""

    schema: str
    design_sha256: str


class _AuditRequired(_Stamped):
    protocol: ProtocolName
    bots: dict[str, Any]
    census: dict[str, Any]


class AuditRecord(_AuditRequired, total=False):
    """``audit.json``."""

    checks: dict[str, Any] | None
    laundered: bool
    responses_seen: int | None
    responses_missing: int | None
    identity_stripping: dict[str, Any]
    candidates: list[str]


# --------------------------------------------------------------------------- generation.schema.json


class _GenerationRequired(_Stamped):
    complete: bool
    roles: dict[str, Any]
    prices: dict[str, Any]


class GenerationRecord(_GenerationRequired, total=False):
    """``generation.json``."""

    wall_seconds: float
    identical_draws: int | None
    sessions: list[dict[str, Any]]


# --------------------------------------------------------------------------- report.schema.json


class ProtocolFields(TypedDict, total=False):
    """The part of ``report.json`` a protocol's analysis computes (``analysis/triangle.py``,
    ``pair.py``, ``preference.py``), splatted into the report; ``AnalysisFields`` adds what every
    analysis must say."""

    judges: list[str]
    test: str
    correct: int | None
    wins: int | None
    losses: int | None
    ties: int | None
    excluded: dict[str, Any] | None
    controls_verdict: dict[str, Any] | None
    p_value: float | None
    pc: IntervalRecord
    pd: IntervalRecord
    dprime: IntervalRecord
    per_trial: list[dict[str, Any]]
    similarity: dict[str, Any] | None
    sequential_result: dict[str, Any]
    per_judge: dict[str, Any]
    pooled: dict[str, Any]
    nicknames: list[str]
    preference: dict[str, Any]
    position_bias: dict[str, Any] | None
    agreement: dict[str, Any] | None
    by_tag: dict[str, Any]
    gates_failed: list[str]
    #: report@1 (triangle and pair never write it): sentences; report@2: ``{code, severity,
    #: message}`` objects (`blindtest.analysis.warnings`).
    warnings: list[Any]
    reviewer_agreement: dict[str, Any] | None
    candidates: dict[str, Any]


class _Verdict(TypedDict):
    n: int
    verdict: str
    statement: str


class AnalysisFields(_Verdict, ProtocolFields):
    """What a protocol's analysis returns: how many trials, the verdict and its statement, and
    any ``ProtocolFields``."""


class _ReportRequired(_Stamped, _Verdict):
    inputs: dict[str, str]
    protocol: ProtocolName


class ReportRecord(_ReportRequired, ProtocolFields, total=False):
    """``report.json``: the protocol's ``ProtocolFields`` and what ``build_report`` adds; every
    key of report@1 (``report.schema.json``) and report@2 (``report@2.schema.json``, a
    preference report)."""

    analysis_version: int
    missing: list[str]
    alpha: float
    sequential: bool
    trials_planned: int
    #: With a people's sample (report@2): the comparisons people judge to finish the design.
    people_trials_planned: int
    dropped_trials: list[dict[str, Any]]
    models: dict[str, str]
    audit: dict[str, Any] | None
    channels_open: list[str]
    channels_closed: list[str]
    notes: list[str]
    appendix: dict[str, Any] | None
    cost: str | None
    e_values: str | None
    judged: dict[str, int]
    reading: dict[str, Any] | None
    responses: dict[str, Any] | None
    responses_sentences: list[str]
    picks_verdict: str
    picks_files: list[str]
    answers: list[dict[str, Any]]
    analysis_options: dict[str, Any]
    summary: dict[str, Any]
    next: dict[str, Any] | None
    sides: dict[str, Any]
    #: A pre-registered decision (``blindtest.analysis.decision``).
    decision: dict[str, Any]
    llm_judges: dict[str, Any] | None
    controls: dict[str, Any] | None
    style_control: dict[str, Any] | None
    machine_vs_person: dict[str, Any] | None
    #: The ``--against`` files, which bt-verify reads again (report@2).
    against_files: list[str]
    #: What people prefer, from their sample and a judge on every comparison (report@2).
    people_estimate: dict[str, Any]
    #: The judges' own records (`blindtest.analysis.raters`): "both bad" words (report@2),
    #: each judge's counts, and the result on first picks when any word was changed.
    abstentions: dict[str, Any]
    judge_counts: list[dict[str, Any]]
    first_picks: dict[str, Any] | None
