"""bt-verify's library: recompute everything a run directory claims from its raw materials and
list every difference. Pure apart from reading through ``artifacts``.

Checked, in order: ``design.sha256`` against the bytes of ``design.json``; the design against
its schema; each prompt's SHA-256; the arrangement re-derived from the seed; that the run is
whole (every slot of the design answered in ``responses.jsonl``, and ``trials.jsonl`` present:
a run with missing responses is *incomplete*, never "verified"); every other artifact against
its schema (for verify, an invalid artifact is evidence of tampering, so it is a difference,
not bad input); every pick's ``design_sha256`` against the design, and a machine judge's
``judge_settings`` against their hash and the same judge's other picks; ``trials.jsonl`` rebuilt
from ``responses.jsonl``; ``audit.json`` replayed; and ``report.json`` recomputed from the
inputs it names, field by field, including the SHA-256 of every input file. A torn final line
(an interrupted append) is skipped, as every reader skips it, and listed in ``skipped``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import orjson

from blindtest.analysis.api import AnalysisOptions, analyze_run
from blindtest.designing.build import build_arrangement, build_candidate_arrangement
from blindtest.errors import BadInput, option
from blindtest.model.candidates import shares_answers
from blindtest.model.checks import CommandRunner
from blindtest.model.derived import parent_trials, renumbered
from blindtest.model.identity import IDENTITY_VERSION
from blindtest.model.normalize import NORMALIZERS_VERSION, normalize_answer
from blindtest.model.pairing import PAIRING_VERSION
from blindtest.model.prompts import prompt_sha256
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord

if TYPE_CHECKING:
    from blindtest.model.slots import SlotState, Work

#: Relative tolerance for floats recomputed on another machine (libm and scipy may differ in
#: the last bits); exact everywhere else.
FLOAT_RTOL = 1e-9


@dataclass(frozen=True, slots=True)
class Difference:
    where: str
    recorded: Any
    recomputed: Any

    def __str__(self) -> str:
        return (
            f"{self.where}: recorded {_short(self.recorded)}, recomputed {_short(self.recomputed)}"
        )


@dataclass
class VerifyResult:
    checked: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    #: What the run lacks to be whole ("20 of 36 responses", "trials.jsonl missing").
    missing: list[str] = field(default_factory=list)
    #: Lines read past, one sentence each ("picks.jsonl line 21: torn final line, skipped").
    skipped: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def ok(self) -> bool:
        return not self.differences and not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "complete": self.complete,
            "missing": self.missing,
            "skipped": self.skipped,
            "checked": self.checked,
            "differences": [
                {"where": d.where, "recorded": d.recorded, "recomputed": d.recomputed}
                for d in self.differences
            ],
        }


def _short(value: Any) -> str:
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= 120 else text[:117] + "..."


def _same(recorded: Any, recomputed: Any) -> bool:
    if isinstance(recorded, float) or isinstance(recomputed, float):
        if not isinstance(recorded, (int, float)) or not isinstance(recomputed, (int, float)):
            return False
        return math.isclose(recorded, recomputed, rel_tol=FLOAT_RTOL, abs_tol=1e-300)
    return bool(recorded == recomputed)


def diff(recorded: Any, recomputed: Any, where: str = "") -> Iterator[Difference]:
    """Every leaf where two JSON values differ, named by JSON pointer."""
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        for key in sorted(set(recorded) | set(recomputed)):
            here = f"{where}/{key}"
            if key not in recorded or key not in recomputed:
                yield Difference(here, recorded.get(key), recomputed.get(key))
            else:
                yield from diff(recorded[key], recomputed[key], here)
    elif isinstance(recorded, list) and isinstance(recomputed, list):
        if len(recorded) != len(recomputed):
            yield Difference(f"{where} (length)", len(recorded), len(recomputed))
        for index, (a, b) in enumerate(zip(recorded, recomputed, strict=False)):
            yield from diff(a, b, f"{where}/{index}")
    elif not _same(recorded, recomputed):
        yield Difference(where or "/", recorded, recomputed)


#: report.json keys added after reports were already written (``sides``); an older
#: report without one still verifies, a newer one is checked in full.
LATER_REPORT_KEYS = ("sides",)
#: The same for report@1 (triangle, pair), which has no analysis version to tell an older
#: report by: the judges' own records (`blindtest.analysis.raters`). A report@2 lacking them
#: is an older analysis version, said as such.
LATER_REPORT_1_KEYS = ("judge_counts", "first_picks")


class _Verifier:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.result = VerifyResult()
        # Each JSONL artifact is read and checked once, however many checks use it (issue
        # 15: responses.jsonl was parsed four times); the checks only read the records.
        self._lines: dict[tuple[Path, str], artifacts.JsonlContents | None] = {}
        self._pending: tuple[object, SlotState, list[Work]] | None = None
        #: The design, once read and checked: the picks files' panel order is derived from it.
        self.design: DesignRecord | None = None

    def pending(
        self, design: DesignRecord, responses: list[artifacts.JsonObject]
    ) -> tuple[SlotState, list[Work]]:
        """(SlotState, pending work) of the responses read, computed once for both checks."""
        from blindtest.model.slots import SlotState, pending_work

        if self._pending is None or self._pending[0] is not responses:
            state = SlotState.from_rows(responses)
            self._pending = (responses, state, pending_work(design, state))
        return self._pending[1], self._pending[2]

    def note(self, name: str) -> None:
        self.result.checked.append(name)

    def differ(self, name: str, recorded: Any, recomputed: Any, limit: int = 20) -> None:
        if type(recorded) is type(recomputed) and recorded == recomputed:
            return  # equal values have no differing leaf (a C-speed shortcut)
        for count, difference in enumerate(diff(recorded, recomputed)):
            if count >= limit:
                self.result.differences.append(Difference(f"{name} (more)", "...", "..."))
                return
            self.result.differences.append(
                Difference(f"{name}{difference.where}", difference.recorded, difference.recomputed)
            )

    def read(self, name: str, schema: str, *, jsonl: bool = False) -> Any:
        """An artifact's contents, or None when it is missing or invalid (a difference)."""
        path = self.run_dir / name
        if not path.exists():
            return None
        if jsonl:
            contents = self.read_lines(path, schema)
            return None if contents is None else contents.records
        try:
            return artifacts.read_json(path, schema)
        except BadInput as error:
            self.result.differences.append(Difference(name, "valid artifact", str(error)))
            return None

    def read_lines(self, path: Path, schema: str) -> artifacts.JsonlContents | None:
        """A JSONL artifact with its line numbers; a torn final line is noted as skipped."""
        key = (path, schema)
        if key not in self._lines:
            self._lines[key] = self._read_lines(path, schema)
        return self._lines[key]

    def _read_lines(self, path: Path, schema: str) -> artifacts.JsonlContents | None:
        name = self.shown(path)
        try:
            contents = artifacts.read_jsonl(path, schema)
        except BadInput as error:
            if not any(d.where == name for d in self.result.differences):
                self.result.differences.append(Difference(name, "valid artifact", str(error)))
            return None
        if contents.torn_line is not None:
            note = (
                f"{name} line {contents.torn_line}: torn final line (an interrupted write), "
                "skipped as every stage skips it"
            )
            if note not in self.result.skipped:
                self.result.skipped.append(note)
        return contents

    def refuse(self, name: str, schema: str, error: str) -> None:
        """A JSONL artifact that is valid alone but not for this design: a difference, and
        every later check reads it as missing (as an artifact its schema refuses)."""
        self._lines[(self.run_dir / name, schema)] = None
        self.result.differences.append(Difference(name, "valid artifact", error))

    def shown(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.run_dir))
        except ValueError:
            return str(path)


class OlderAnalysis(Difference):
    """A report written by another version of the analysis: one line (``where`` says it all,
    with the command that analyses the run again), and no reason to stop checking the other
    reports, whose inputs are the same."""

    def __str__(self) -> str:
        return self.where


def _inputs_hold(result: VerifyResult) -> bool:
    """Whether the run's inputs hold, so that its reports can be recomputed: nothing missing,
    and no difference but a report of another analysis version."""
    return not result.missing and all(isinstance(d, OlderAnalysis) for d in result.differences)


def _check_design(v: _Verifier) -> DesignRecord | None:
    data = artifacts.read_bytes(v.run_dir / artifacts.DESIGN)
    actual = artifacts.sha256_bytes(data)
    try:
        recorded = artifacts.read_design_hash(v.run_dir)
    except BadInput as error:
        recorded = str(error)
    v.note(artifacts.DESIGN_HASH)
    if recorded != actual:
        v.result.differences.append(Difference(artifacts.DESIGN_HASH, recorded, actual))
    design = v.read(artifacts.DESIGN, "design")
    if design is None:
        return None
    v.note("prompt hashes")
    for index, prompt in enumerate(design["prompts"]):
        text_hash = prompt_sha256(prompt)  # a conversation's covers every turn
        if text_hash != prompt["sha256"]:
            v.result.differences.append(
                Difference(
                    f"{artifacts.DESIGN}/prompts/{index}/sha256", prompt["sha256"], text_hash
                )
            )
    recorded_version = design["normalization"]["version"]
    if recorded_version != NORMALIZERS_VERSION:
        # This blindtest normalizes text differently from the one that made the run.
        v.result.differences.append(
            Difference(
                f"{artifacts.DESIGN}/normalization/version", recorded_version, NORMALIZERS_VERSION
            )
        )
    identity = design["normalization"].get("identity_strip") or {}
    identity_version = identity.get("version", IDENTITY_VERSION)  # absent: the first rules
    if identity_version != IDENTITY_VERSION:
        # This blindtest strips identity terms by other rules than the one that made the run.
        v.result.differences.append(
            Difference(
                f"{artifacts.DESIGN}/normalization/identity_strip/version",
                identity_version,
                IDENTITY_VERSION,
            )
        )
    v.note("arrangement from the seed")
    # A design made from another (--from RUN --drop-trial N): the first design's arrangement,
    # less the dropped trials, renumbered.
    origin = cast(Mapping[str, Any], design)
    if shares_answers(origin):
        full = _candidate_arrangement(v, origin)
    else:
        full = build_arrangement(  # hidden controls and planted comparisons are part of it
            design["seed"],
            parent_trials(origin),
            [p["id"] for p in design["prompts"]],
            design["protocol"],
            _first_controls(origin),
            *_planted(origin),
        )
    derived = renumbered(full, origin)
    v.differ(f"{artifacts.DESIGN}/arrangement", design["arrangement"], derived)
    _check_marked(v, origin, full)
    return cast(DesignRecord, design)  # validated against the schema by v.read


def _check_marked(v: _Verifier, design: Mapping[str, Any], full: list[Any]) -> None:
    """What the design records beside its arrangement: the hidden controls it marks, and
    the people's sample drawn over its prompts."""
    if "controls" in design:  # the count recorded is the count the arrangement marks
        marked = sum("control" in e for e in design["arrangement"])
        v.differ(f"{artifacts.DESIGN}/controls", design["controls"], marked)
    if "people_sample" in design:
        _check_people_sample(v, design, full)


def _check_people_sample(v: _Verifier, design: Mapping[str, Any], full: list[Any]) -> None:
    """The people's sample re-drawn from the seed over the prompts the first design of the
    line used (:mod:`blindtest.model.people_sample`); a draw it refuses is a difference."""
    from blindtest.model.people_sample import draw_people_sample, used_prompts

    recorded = design["people_sample"]
    v.note("people's sample from the seed")
    try:
        drawn: Any = draw_people_sample(
            str(design["seed"]),
            used_prompts({"prompts": design["prompts"], "arrangement": full}),
            recorded["size"],
            recorded["by"],
            judge_prediction=recorded["judge_prediction"],
            missing=recorded["missing"],
        )
    except ValueError as error:
        drawn = f"no sample: {error}"
    v.differ(f"{artifacts.DESIGN}/people_sample", recorded, drawn)


def _candidate_arrangement(v: _Verifier, design: Mapping[str, Any]) -> list[Any]:
    """A several-candidate design's arrangement from its seed, candidates, prompts and pairing
    (:func:`blindtest.designing.build.build_candidate_arrangement`); its models are its candidates
    and its trials the comparisons it holds. A schedule the pairing refuses (an unknown
    reference, M out of range) is a difference, never an exception."""
    names = [str(name) for name in design["candidates"]]
    mode = str(design["pairing"]["mode"])
    checks: list[tuple[str, Any, Any]] = [
        ("pairing/version", design["pairing"]["version"], PAIRING_VERSION),
        ("models (their names)", sorted(design["models"]), sorted(names)),
    ]
    if "derived_from" not in design:
        checks.append(("trials", design["trials"], len(design["arrangement"])))
    for where, recorded, recomputed in checks:
        if recorded != recomputed:
            v.result.differences.append(
                Difference(f"{artifacts.DESIGN}/{where}", recorded, recomputed)
            )
    planted, champion = _planted(design)
    try:
        return build_candidate_arrangement(
            str(design["seed"]),
            names,
            [str(p["id"]) for p in design["prompts"]],
            mode,
            parent_trials(design) - planted,
            planted,
            champion,
        )
    except ValueError as error:
        v.result.differences.append(
            Difference(f"{artifacts.DESIGN}/pairing/mode", mode, f"no schedule: {error}")
        )
        return []


def _planted(design: Mapping[str, Any]) -> tuple[int, str]:
    """The planted comparisons the decision asked for and its champion ((0, "A") without);
    a derived design keeps the first design's decision."""
    decision = design.get("decision")
    if not isinstance(decision, Mapping):
        return 0, "A"
    sensitivity = decision.get("sensitivity")
    planted = int(sensitivity["comparisons"]) if isinstance(sensitivity, Mapping) else 0
    return planted, str(decision["champion"])


def _first_controls(design: Mapping[str, Any]) -> int:
    """The hidden controls of the first design of the line (its own, unless derived)."""
    origin = design.get("derived_from")
    if isinstance(origin, Mapping):
        return int(origin.get("controls", 0))
    return int(design.get("controls", 0))


def _check_trials(v: _Verifier, design: DesignRecord) -> None:
    from blindtest.model.slots import build_trials_view

    responses = v.read(artifacts.RESPONSES, "responses", jsonl=True)
    trials = v.read(artifacts.TRIALS, "trials", jsonl=True)
    if responses is None or trials is None:
        return
    state, work = v.pending(design, responses)
    if work:
        return  # incomplete: named by _check_complete
    v.note(f"{artifacts.TRIALS} from {artifacts.RESPONSES}")
    v.differ(artifacts.TRIALS, trials, build_trials_view(design, state))


#: Rows named one by one when answer texts differ; the rest are counted.
NAMED_TEXT_ROWS = 3
TEXTS_CHECK = f"{artifacts.RESPONSES} texts from raw_text under the design's normalization"


class Summary(Difference):
    """A difference counted over many rows: ``where`` says it all (``recorded`` is how many
    differ, ``recomputed`` how many should)."""

    def __str__(self) -> str:
        return self.where


def _row_name(row: Mapping[str, Any], line: int) -> str:
    launder = " launder" if row.get("stage") == "launder" else ""
    return f"trial {row['trial']} slot {row['slot']}{launder} (line {line})"


def _text_differences(
    normalization: Mapping[str, Any], row: Mapping[str, Any]
) -> list[tuple[str, Any, Any]]:
    """(field, recorded, recomputed) for each field of one row its raw text does not give."""
    if row["status"] != "ok":  # a failure row: text null (the schema), nothing beside it
        return [(key, row[key], None) for key in ("raw_text", "identity_stripped") if key in row]
    text = row["text"]
    raw = row.get("raw_text", text)
    derived, stripped = normalize_answer(normalization, raw)
    found: list[tuple[str, Any, Any]] = []
    if derived != text:
        found.append(("text", text, derived))
    if row.get("identity_stripped", {}) != stripped:
        found.append(("identity_stripped", row.get("identity_stripped"), stripped or None))
    return found


def _check_texts(v: _Verifier, design: DesignRecord) -> None:
    """Each row's ``text`` is the design's normalization of its own raw answer (a text edited
    by hand, with trials.jsonl edited alike, is found here); one pass, linear in the rows."""
    path = v.run_dir / artifacts.RESPONSES
    contents = v.read_lines(path, "responses") if path.exists() else None
    if contents is None:
        return  # missing (named by _check_complete) or invalid (a difference already)
    v.note(TEXTS_CHECK)
    normalization = design["normalization"]
    records = contents.records
    lines = contents.lines or list(range(1, len(records) + 1))
    bad: list[tuple[str, list[tuple[str, Any, Any]]]] = []
    count = 0
    for line, row in zip(lines, records, strict=True):
        found = _text_differences(normalization, row)
        if found:
            count += 1
            if len(bad) < NAMED_TEXT_ROWS:
                bad.append((_row_name(row, line), found))
    if not count:
        return
    first = ", ".join(name for name, _ in bad) + (", ..." if count > len(bad) else "")
    does = "does" if count == 1 else "do"
    v.result.differences.append(
        Summary(
            f"{artifacts.RESPONSES}: {count} of {len(records)} rows {does} not hold the design's "
            f"normalization of the raw answer recorded in it (text, identity_stripped from "
            f"raw_text): {first}",
            count,
            0,
        )
    )
    for name, found in bad:
        for key, recorded, recomputed in found:
            v.result.differences.append(
                Difference(f"{artifacts.RESPONSES} {name}/{key}", recorded, recomputed)
            )


REQUESTS_CHECK = f"{artifacts.RESPONSES} answers made for the requests the design asks now"


def _check_requests(v: _Verifier, design: DesignRecord) -> None:
    """Each answer that counts (the latest ok row per slot) answers the request its slot makes
    now: the hash it records (a row from before hashes were recorded: the model it names)
    against the request rebuilt from the design. An answer reused after the design was
    edited (another model, prompt or parameter) is found here."""
    from blindtest.generation.requests import DETERMINED_BY, SlotRequests
    from blindtest.model.slots import LAUNDER, Slot, Work, original_text

    path = v.run_dir / artifacts.RESPONSES
    contents = v.read_lines(path, "responses") if path.exists() else None
    if contents is None:
        return
    v.note(REQUESTS_CHECK)
    records = contents.records
    lines = contents.lines or list(range(1, len(records) + 1))
    line_of = {id(row): line for line, row in zip(lines, records, strict=True)}
    state, _ = v.pending(design, records)
    prompt_of = {entry["trial"]: entry["prompt_id"] for entry in design["arrangement"]}
    try:
        requests = SlotRequests(design)
    except BadInput as error:
        v.result.differences.append(Difference(REQUESTS_CHECK, "a design to ask", str(error)))
        return
    bad: list[tuple[str, str, Any, Any]] = []
    count = 0
    for stage, rows in (("generate", state.generated), (LAUNDER, state.laundered)):
        for key, row in rows.items():
            generated = state.generated.get(key)
            if row["status"] != "ok" or key[0] not in prompt_of or generated is None:
                continue
            slot = Slot(key[0], key[1], row["side"], prompt_of[key[0]])
            source = original_text(generated) if stage == LAUNDER else None
            work = Work(slot, stage, source)
            if requests.matches(row, work):
                continue
            count += 1
            if len(bad) < NAMED_TEXT_ROWS:
                field_ = next((k for k in DETERMINED_BY if k in row), "model")
                recomputed = (
                    requests.model(work) if field_ == "model" else requests.determined_by(work)[1]
                )
                name = f"{_row_name(row, line_of.get(id(row), 0))} side {row['side']}"
                bad.append((name, field_, row.get(field_), recomputed))
    if not count:
        return
    first = ", ".join(name for name, *_ in bad) + (", ..." if count > len(bad) else "")
    v.result.differences.append(
        Summary(
            f"{artifacts.RESPONSES}: {count} of the answers that count "
            f"{'was' if count == 1 else 'were'} made for another request than the design asks "
            f"now (it changed since): {first}; rerun bt-generate with --refetch-changed, or use "
            "a new run directory",
            count,
            0,
        )
    )
    for name, field_, recorded, recomputed in bad:
        v.result.differences.append(
            Difference(f"{artifacts.RESPONSES} {name}/{field_}", recorded, recomputed)
        )


def _check_complete(v: _Verifier, design: DesignRecord) -> None:
    """A run is whole when every slot of the design is answered (and laundered, when the design
    launders) and the blinded view exists; anything less is listed in ``missing``."""
    from blindtest.model.protocols import protocol_of

    v.note("the run is whole (every slot answered, trials.jsonl present)")
    from blindtest.model.candidates import answer_owners
    from blindtest.model.slots import check_rows_match_design

    # Every trial has the protocol's number of slots (plan_slots would build 90,000 of them);
    # with candidates, one slot per answer.
    total = len(design["arrangement"]) * protocol_of(design).options
    # A planted comparison's degraded copy is made, not fetched: one slot fewer each.
    total -= sum("planted" in e for e in design["arrangement"]) * (protocol_of(design).options - 1)
    if shares_answers(design):
        total = len(answer_owners(design))
    if not (v.run_dir / artifacts.RESPONSES).exists():
        v.result.missing.append(f"0 of {total} responses ({artifacts.RESPONSES} missing)")
    else:
        responses = v.read(artifacts.RESPONSES, "responses", jsonl=True)
        try:  # the schema takes any side name: the design says which this run may hold
            check_rows_match_design(design, responses or ())
        except BadInput as error:
            v.refuse(artifacts.RESPONSES, "responses", str(error))
            responses = None
        if responses is not None:
            _, work = v.pending(design, responses)
            unanswered = sum(1 for w in work if w.stage == "generate")
            unlaundered = len(work) - unanswered
            if unanswered:
                v.result.missing.append(f"{total - unanswered} of {total} responses")
            if unlaundered:
                v.result.missing.append(f"{unlaundered} of {total} responses not yet laundered")
    if not (v.run_dir / artifacts.TRIALS).exists():
        v.result.missing.append(f"{artifacts.TRIALS} missing")


def _check_picks(v: _Verifier, sha256: str) -> None:
    """Every pick written against this design says so; a pick made against another design (a
    copied file) is a difference, named by file and line."""
    for path in sorted(v.run_dir.glob("picks*.jsonl")):
        _check_picks_file(v, path, sha256)


def _check_picks_file(v: _Verifier, path: Path, sha256: str) -> None:
    name = v.shown(path)
    if f"{name} against the design hash" in v.result.checked:
        return
    contents = v.read_lines(path, "picks")
    if contents is None:
        return
    v.note(f"{name} against the design hash")
    from blindtest.model.picks import settings_sha256

    lines = contents.lines or list(range(1, len(contents.records) + 1))
    first: dict[str, str] = {}  # judge -> the settings hash of its first pick that has one
    for number, pick in zip(lines, contents.records, strict=True):
        recorded = pick.get("design_sha256")
        if recorded is not None and recorded != sha256:
            v.result.differences.append(
                Difference(f"{name}:{number}/design_sha256", recorded, sha256)
            )
        settings = pick.get("judge_settings")
        if not isinstance(settings, dict):
            continue
        own = settings_sha256(settings)
        if pick.get("judge_settings_sha256") != own:
            v.result.differences.append(
                Difference(
                    f"{name}:{number}/judge_settings_sha256", pick.get("judge_settings_sha256"), own
                )
            )
        judge = str(pick.get("judge"))
        if pick.get("failed") is True:
            continue  # a failure row is no pick: a rerun with other settings may ask again
        if first.setdefault(judge, own) != own:  # one judge, one set of settings per file
            v.result.differences.append(
                Difference(f"{name}:{number}/judge_settings ({judge})", own, first[judge])
            )
    if first:
        v.note(f"{name} judge settings against their hash, one set per judge")
    _check_panel_order(v, name, list(zip(lines, contents.records, strict=True)))


def _check_panel_order(v: _Verifier, name: str, rows: list[tuple[int, Any]]) -> None:
    """A panel reviewer's first record of each trial follows the order re-derived from the
    design seed and the reviewer's name (panels that record ``"order": "reviewer"``)."""
    from blindtest.model.assignment import REVIEWER_ORDER, order_problems
    from blindtest.model.people_sample import people_pool

    design = v.design
    ordered = any(
        isinstance(r.get("panel"), dict) and r["panel"].get("order") == REVIEWER_ORDER
        for _, r in rows
    )
    if design is None or not ordered:
        return
    pool = people_pool(design) if "people_sample" in design else int(design["trials"])
    problems = order_problems(rows, str(design["seed"]), pool)
    for line, why in problems:
        v.result.differences.append(
            Difference(f"{name}:{line}/panel order", why, "the order re-derived from the seed")
        )
    v.note(f"{name} each reviewer's order, re-derived from the design seed and the name")


def _check_audit(
    v: _Verifier, design: DesignRecord, sha256: str, runner: CommandRunner | None
) -> None:
    from blindtest.auditing.build import build_audit
    from blindtest.model.picks import trials_from_records

    audit = v.read(artifacts.AUDIT, "audit")
    trials = v.read(artifacts.TRIALS, "trials", jsonl=True)
    if audit is None or trials is None:
        return
    responses = v.read(artifacts.RESPONSES, "responses", jsonl=True)
    try:
        views = trials_from_records(trials, design)
    except BadInput as error:
        v.result.differences.append(Difference(artifacts.TRIALS, "the design's trials", str(error)))
        return
    state = None if responses is None else v.pending(design, responses)[0]
    recomputed: Mapping[str, Any] = build_audit(
        design, sha256, views, responses, runner, state=state
    )
    commands = any("command" in p.get("check", {}) for p in design["prompts"])
    if commands and runner is None:
        # Shell-command checks run only when allowed; compare everything else.
        v.note(f"{artifacts.AUDIT} (command checks not re-run; bt-verify --allow-commands does)")
        audit = {k: val for k, val in audit.items() if k != "checks"}
        recomputed = {k: val for k, val in recomputed.items() if k != "checks"}
    else:
        v.note(artifacts.AUDIT)
    v.differ(artifacts.AUDIT, audit, recomputed)


def _check_generation(v: _Verifier, design: DesignRecord) -> None:
    """Tokens, failures and cost per role recomputed from responses.jsonl and the recorded
    prices (wall time is a measurement, not a derivation)."""
    from blindtest.generation.summary import generation_record

    generation = v.read(artifacts.GENERATION, "generation")
    responses = v.read(artifacts.RESPONSES, "responses", jsonl=True)
    if generation is None or responses is None:
        return
    prices = {role: (p["input"], p["output"]) for role, p in generation["prices"].items()}
    recomputed = generation_record(
        design,
        generation["design_sha256"],
        responses,
        prices,
        generation.get("wall_seconds", 0),
        generation.get("sessions"),  # the ledger is a measurement, like the wall time
    )
    v.note(f"{artifacts.GENERATION} from {artifacts.RESPONSES}")
    v.differ(artifacts.GENERATION, generation, recomputed)


def _check_report(v: _Verifier, name: str, sha256: str) -> None:
    report = v.read(name, "report")
    if report is None:
        return
    picks = [
        Path(p) if Path(p).is_absolute() else v.run_dir / p
        for p in report.get("picks_files", [artifacts.PICKS])
    ]
    against = [
        Path(p) if Path(p).is_absolute() else v.run_dir / p
        for p in report.get("against_files") or []
    ]
    for path in [*picks, *against]:
        if not path.exists():
            v.result.differences.append(
                Difference(f"{name}/picks_files", str(path), "missing: the report's input is gone")
            )
            return
        _check_picks_file(v, path, sha256)
    if not _inputs_hold(v.result):
        v.note(f"{name} not recomputed: its picks already differ")
        return
    e_values = v.run_dir / (report.get("e_values") or artifacts.e_values_name(name))
    try:
        result = analyze_run(
            v.run_dir, picks, _options(report), e_values_path=e_values, against=against
        )
    except BadInput as error:
        v.result.differences.append(Difference(name, "recomputable", str(error)))
        return
    recomputed = dict(result.report)
    stale = _older_analysis(v, name, report, recomputed)
    if stale is not None:
        v.note(f"{name}: its analysis version against this blindtest's")
        v.result.differences.append(stale)
        return
    v.note(f"{name} from its inputs")
    later = LATER_REPORT_KEYS + (LATER_REPORT_1_KEYS if artifacts.tag_major(report) == 1 else ())
    for key in later:  # a report written before the key existed lacks it
        if key not in report:
            recomputed.pop(key, None)
    v.differ(name, report, recomputed)
    if result.e_values:
        # Beside its report: in the run, or (a report written elsewhere) by its whole path.
        shown = e_values.name if e_values.parent == v.run_dir else str(e_values)
        recorded = v.read(shown, "e_values", jsonl=True)
        v.note(shown)
        v.differ(shown, recorded, result.e_values)


def _version_words(report: Mapping[str, Any]) -> str:
    version = report.get("analysis_version")
    return f"analysis version {version}" if version is not None else "an analysis before versions"


def _older_analysis(
    v: _Verifier, name: str, report: Mapping[str, Any], recomputed: Mapping[str, Any]
) -> Difference | None:
    """One difference, in one line, when ``report`` was written by another version of the
    analysis than this blindtest's (another schema major, another ``analysis_version``):
    its figures are not tampered with, they are an older analysis's, and the line names the
    command that analyses the run again. None when both versions agree."""
    tags = (artifacts.tag_major(report), artifacts.tag_major(recomputed))
    versions = (report.get("analysis_version"), recomputed.get("analysis_version"))
    if tags[0] == tags[1] and versions[0] == versions[1]:
        return None
    recorded = f"{report.get('schema')}, {_version_words(report)}"
    current = f"{recomputed.get('schema')}, {_version_words(recomputed)}"
    newer = (
        tags[0] is not None
        and tags[1] is not None
        and (tags[0], versions[0] or 0) > (tags[1], versions[1] or 0)
    )
    if newer:
        return OlderAnalysis(
            f"{name}: written by a newer analysis ({recorded}) than this blindtest's "
            f"({current}); verify it with the blindtest that wrote it",
            recorded,
            current,
        )
    return OlderAnalysis(
        f"{name}: written by an older analysis ({recorded}; this blindtest writes {current}); "
        f"analyse the run again with: {_reanalyse(v, name, report)}",
        recorded,
        current,
    )


def _reanalyse(v: _Verifier, name: str, report: Mapping[str, Any]) -> str:
    """The bt-analyze line that writes ``name`` again from the inputs it names."""
    from blindtest.present.hints import stage_command

    args: list[str] = [str(v.run_dir)]
    picks = list(report.get("picks_files") or [artifacts.PICKS])
    if picks != [artifacts.PICKS]:
        for path in picks:
            args += ["--picks", path if Path(path).is_absolute() else str(v.run_dir / path)]
    for path in report.get("against_files") or []:
        args += ["--against", path if Path(path).is_absolute() else str(v.run_dir / path)]
    if name != artifacts.REPORT:
        args += ["--out", str(v.run_dir / name)]
    recorded = report.get("analysis_options") or {}
    defaults = AnalysisOptions()
    # Before analysis version 5 the options were always recorded, at their defaults then:
    # those were not chosen, and are not carried into the command.
    old = _OLD_DEFAULTS if (report.get("analysis_version") or 0) < _OPTIONS_GIVEN_FROM else {}
    for key, flag in (("min_kappa", "--min-kappa"), ("position_margin", "--position-margin")):
        value = recorded.get(key)
        if value is not None and value != getattr(defaults, key) and value != old.get(key):
            args += [flag, f"{value:g}"]
    return stage_command("analyze", *args, "--force")


#: bt-analyze's defaults before analysis version 5 (--min-kappa 0.2 failed a panel below it;
#: --position-margin 0.1 flagged a left share that far from half), and the version from which
#: a report records these options only when given.
_OLD_DEFAULTS = {"min_kappa": 0.2, "position_margin": 0.1}
_OPTIONS_GIVEN_FROM = 5


def _options(report: Mapping[str, Any]) -> AnalysisOptions:
    recorded = report.get("analysis_options") or {}
    return AnalysisOptions(**recorded)


def verify_run(
    run_dir: Path, *, runner: CommandRunner | None = None, reports: Sequence[Path] = ()
) -> VerifyResult:
    """Recompute the run directory and list every difference (empty when it all holds).
    ``reports``: reports written outside the run (``bt-analyze --out``), recomputed too."""
    if not (run_dir / artifacts.DESIGN).exists():
        raise BadInput(f"{run_dir}: no {artifacts.DESIGN}; not a run directory")
    for report in reports:
        if not report.is_file():
            raise BadInput(f"{option('reports', report)}: no such file")
    with artifacts.reading_once():  # the checks and the recomputed report share each read
        return _verify(run_dir, runner, reports)


def verify_reports(run_dir: Path) -> VerifyResult:
    """bt-verify's last check alone: every ``report*.json`` recomputed from the inputs it
    names (each picks file checked against the design hash first), for a caller that checks
    the rest of the run itself."""
    if not (run_dir / artifacts.DESIGN).exists():
        raise BadInput(f"{run_dir}: no {artifacts.DESIGN}; not a run directory")
    with artifacts.reading_once():
        v = _Verifier(run_dir)
        sha256 = artifacts.sha256_bytes(artifacts.read_bytes(run_dir / artifacts.DESIGN))
        for name in sorted(p.name for p in run_dir.glob("report*.json")):
            _check_report(v, name, sha256)
        return v.result


def _verify(
    run_dir: Path, runner: CommandRunner | None, elsewhere: Sequence[Path] = ()
) -> VerifyResult:
    v = _Verifier(run_dir)
    design = _check_design(v)
    if design is None:
        return v.result
    sha256 = artifacts.sha256_bytes(artifacts.read_bytes(run_dir / artifacts.DESIGN))
    v.design = design
    _check_complete(v, design)
    _check_texts(v, design)
    _check_requests(v, design)
    _check_trials(v, design)
    _check_picks(v, sha256)
    _check_generation(v, design)
    _check_audit(v, design, sha256, runner)
    reports = sorted(p.name for p in run_dir.glob("report*.json"))
    inside = {(run_dir / name).resolve() for name in reports}
    reports += [str(p.resolve()) for p in elsewhere if p.resolve() not in inside]
    for name in reports:
        if _inputs_hold(v.result):
            _check_report(v, name, sha256)
        else:
            v.note(f"{name} not recomputed: its inputs already differ")
    return v.result
