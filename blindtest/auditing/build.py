"""bt-audit's library: replay every trial with the mechanical tell bots, take a formatting
census per model, and run the prompts' mechanical checks. Pure; opens no file.

The bots see exactly what the judge saw (``trials.jsonl``) and use the generator
``DesignRng(seed, "bot:<kind>")``, the same as ``bt-judge --judge bot:<kind>``, so the audit's
length bot and a length-bot judge make identical picks. Scoring:

* triangle: correct = the bot picked the odd position; p-value as for a judge (one-sided exact
  binomial against 1/3).
* pair: the length bot names the longer response "longer"; correct = consistent with the
  mapping longer = A; two-sided exact test against 1/2 (length alone identifies the model when
  one model is reliably longer, in either direction).
* preference: the length bot prefers the longer response; "correct" counts trials where it
  preferred A, over untied trials, with a two-sided test against 1/2: a small p means length
  alone separates the models, so a judge's preference may be a length preference.

The census reads the texts as displayed (after normalization), attributed to their side. Checks
read the responses as the endpoints returned them.

Several candidates. The bots replay every comparison as for two sides (the same picks as
``bt-judge --judge bot:length``); the length tell is then taken per candidate, against the pool
of the candidates it met, with the prompt as the unit (a candidate's one answer to a prompt
serves all its comparisons of that prompt, so those comparisons are not independent): per
prompt, the candidate's score is the comparisons the length bot gave it minus those it gave
its opponents; a prompt counts as "longer" (score > 0) or "shorter" (< 0), an even score
leaves the test. Under "length does not tell this candidate from the others" a prompt is as
likely longer as shorter: a two-sided exact sign test against 1/2, Holm-adjusted across the
candidates. The bot's headline ``n``/``correct``/``p_value`` are those of the candidate with
the smallest Holm-adjusted p (named in ``candidate``): a small p there means length alone
separates at least one candidate from the rest, with the family-wise error held at alpha. The
census, the identity stripping counts and the checks' pass rates are per candidate, each
answer counted once (at the comparison that owns it); the checks' paired test is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from blindtest import reportfmt
from blindtest.model.bots import BOT_NICKNAMES, bot_pick, duplicate_pick, length_from_words
from blindtest.model.candidates import candidates_of, comparison_sides, shares_answers
from blindtest.model.census import TextCensus, model_census, take_census
from blindtest.model.checks import CommandRunner, evaluate
from blindtest.model.normalize import classify_text, count_words
from blindtest.model.picks import Pick, Trial
from blindtest.model.protocols import protocol_of
from blindtest.model.rng import DesignRng
from blindtest.model.scoring import arrangement_entry
from blindtest.model.slots import LAUNDER, Slot, SlotState, original_text, plan_slots
from blindtest.rundir.artifacts import JsonObject, schema_tag
from blindtest.rundir.types import AuditRecord, DesignRecord
from blindtest.stats import binomial_test
from blindtest.stats.binomial import binomial_p_value
from blindtest.stats.multiple import holm

BOT_KINDS = ("length", "duplicate")


def _bot_score(design: DesignRecord, picks: Sequence[Pick]) -> tuple[int, int, float | None]:
    """(correct, n, p-value) for a bot's picks, by protocol (see the module docstring)."""
    rules = protocol_of(design)
    if not picks:
        return 0, 0, None
    # A pair bot's first nickname is taken to mean A; the other protocols ignore it.
    first = picks[0].nicknames[0] if picks[0].nicknames else "longer"
    tallies = [rules.tally(arrangement_entry(design, p.trial), p.pick, first) for p in picks]
    counted = [t for t in tallies if t is not None]  # a preference tie leaves the test
    if not counted:
        return 0, 0, None
    correct, n = sum(counted), len(counted)
    return correct, n, binomial_p_value(correct, n, rules.chance, rules.alternative)


def _counted_once() -> Callable[[str], int]:
    """``count_words`` with each distinct text counted once: an answer of a several-candidate
    run sits in every comparison of its prompt that shows it (up to k - 1), and counting its
    words again for each was most of the length bot's replay."""
    counts: dict[str, int] = {}

    def count(text: str) -> int:
        found = counts.get(text)
        if found is None:
            found = counts[text] = count_words(text)
        return found

    return count


#: Per trial, the census of each option in slot order.
Censuses = Mapping[int, Sequence[TextCensus]]
#: A bot's choice for each trial in turn: its pick and, for the duplicate spotter, whether it
#: fired (None for the length bot). Plain tuples: a `Pick` each, for both bots at once, was
#: 27 MiB at 30,000 trials.
Choices = Sequence[tuple[int | str, bool | None]]


def read_answers(
    design: DesignRecord, trials: Sequence[Trial]
) -> tuple[Censuses, dict[str, Choices]]:
    """One pass over a two-sided run's answers, each classified once (`classify_text`) for all
    of its readers: the census of each option, the length bot's choice in each trial (from the
    words the census counted) and, in a triangle run, the duplicate spotter's, each bot
    drawing from the generator `replay_bot` gives it, trial by trial. An answer's flattened
    text lives only while its trial is read: nothing per answer is kept but its census."""
    protocol = design["protocol"]
    spots = protocol_of(design).repeats_side  # a duplicate spotter has only a triangle form
    rngs = {kind: DesignRng(design["seed"], f"bot:{kind}") for kind in BOT_KINDS}
    censuses: dict[int, tuple[TextCensus, ...]] = {}
    duplicate: list[tuple[int | str, bool | None]] = []
    length: list[tuple[int | str, bool | None]] = []
    for trial in trials:
        read = [classify_text(option) for option in trial.options]
        if spots:
            duplicate.append(duplicate_pick(read, rngs["duplicate"]))  # refuses other than 3
        counted = censuses[trial.number] = tuple(take_census(option) for option in read)
        words = [census.words for census in counted]
        length.append((length_from_words(protocol, words, rngs["length"]), None))
    return censuses, {"duplicate": duplicate, "length": length} if spots else {"length": length}


def replay_bot(
    design: DesignRecord,
    trials: Sequence[Trial],
    kind: str,
    made: Choices | None = None,
) -> JsonObject:
    """One bot's picks over every trial, with its score (``made``: its choices in ``trials``,
    made already by `read_answers`)."""
    protocol = design["protocol"]
    if kind == "duplicate" and not protocol_of(design).repeats_side:
        return {"picks": [], "n": 0, "correct": 0, "p_value": None, "applicable": False}
    rng = DesignRng(design["seed"], f"bot:{kind}")
    if made is not None:
        # A pair bot's pick is one of its nicknames, recorded with them as `bot_pick` does.
        names = BOT_NICKNAMES[kind] if protocol_of(design).pick_kind == "nickname" else None
        picks = [
            _made(kind, trial, choice, names) for trial, choice in zip(trials, made, strict=True)
        ]
    elif kind == "duplicate":
        # The same picks as bt-judge's bot, without the similarity scores it records.
        picks = [_duplicate(trial, rng) for trial in trials]
    else:
        count = _counted_once()
        picks = [bot_pick(kind, protocol, trial, rng, count) for trial in trials]
    tells = None
    if shares_answers(design) and kind == "length":  # a prompt's answers meet several times
        tells = candidate_length_tells(design, picks)
        correct, n, p_value = _headline(tells)
    else:
        correct, n, p_value = _bot_score(design, picks)
    records = []
    for pick in picks:
        record: JsonObject = {"trial": pick.trial, "pick": pick.pick}
        if pick.bot and "fired" in pick.bot:
            record["fired"] = pick.bot["fired"]
        records.append(record)
    result: JsonObject = {"picks": records, "n": n, "correct": correct, "p_value": p_value}
    if kind == "duplicate":
        result["fired"] = sum(1 for r in records if r.get("fired"))
    if tells is not None:
        tested = [name for name in tells if tells[name]["p_holm"] is not None]
        result["candidate"] = min(tested, key=lambda name: tells[name]["p_holm"], default=None)
        result["unit"] = "prompt"
        result["per_candidate"] = tells
    return result


def candidate_length_tells(design: DesignRecord, picks: Sequence[Pick]) -> dict[str, JsonObject]:
    """Per candidate, the length bot's sign test over prompts (module doc): ``prompts``
    (prompts where it met another candidate), ``longer``/``shorter``/``even`` (prompts by its
    score), ``comparisons`` and ``preferred`` (comparisons, untied, and those the bot gave
    it: descriptive, not the test's unit), ``p_value`` (exact, two-sided, 1/2 over
    ``longer + shorter``) and ``p_holm`` (Holm across the candidates)."""
    names = candidates_of(design)
    score: dict[tuple[str, str], int] = {}
    comparisons = dict.fromkeys(names, 0)
    preferred = dict.fromkeys(names, 0)
    for pick in picks:
        entry = arrangement_entry(design, pick.trial)
        left, right = comparison_sides(entry)
        prompt_id = str(entry["prompt_id"])
        for name in (left, right):
            score.setdefault((name, prompt_id), 0)
        if pick.pick not in ("left", "right"):
            continue  # a tie (equal lengths) gives neither a point
        winner, loser = (left, right) if pick.pick == "left" else (right, left)
        score[(winner, prompt_id)] += 1
        score[(loser, prompt_id)] -= 1
        comparisons[winner] += 1
        comparisons[loser] += 1
        preferred[winner] += 1
    tells: dict[str, JsonObject] = {}
    for name in names:
        scores = [value for (who, _), value in score.items() if who == name]
        longer = sum(1 for value in scores if value > 0)
        shorter = sum(1 for value in scores if value < 0)
        n = longer + shorter
        tells[name] = {
            "prompts": len(scores),
            "longer": longer,
            "shorter": shorter,
            "even": len(scores) - n,
            "comparisons": comparisons[name],
            "preferred": preferred[name],
            "p_value": binomial_p_value(longer, n, 0.5, "two-sided") if n else None,
        }
    tested = [name for name in names if tells[name]["p_value"] is not None]
    adjusted = dict(zip(tested, holm([tells[n]["p_value"] for n in tested]), strict=True))
    for name in names:
        tells[name]["p_holm"] = adjusted.get(name)
    return tells


def candidate_tell_lines(document: Mapping[str, Any], kind: str) -> list[str]:
    """``bt-audit --show``'s lines for a bot's per-candidate tell: on how many prompts the
    bot gave the candidate more of its comparisons than its opponents (the prompt is the
    unit), with the exact p and Holm's."""
    bot = document["bots"][kind]
    lines = [f"{kind} bot per candidate, prompt as the unit (Holm across candidates):"]
    for name in document["candidates"]:
        tell = bot["per_candidate"][name]
        uneven = tell["longer"] + tell["shorter"]
        if not uneven:
            even = reportfmt.count(tell["even"], "prompt")
            lines.append(f"  {name}: length never told it from its opponents ({even})")
            continue
        p = ""
        if tell["p_value"] is not None:
            p = f", p = {tell['p_value']:.2g}, Holm p = {tell['p_holm']:.2g}"
        lines.append(
            f"  {name} preferred on balance on {tell['longer']} of "
            f"{reportfmt.count(uneven, 'prompt')}{p}"
        )
    return lines


def _headline(tells: Mapping[str, JsonObject]) -> tuple[int, int, float | None]:
    """(correct, n, p) of the candidate length separates most (smallest Holm-adjusted p):
    its longer prompts, its prompts with an uneven score, and that adjusted p."""
    tested = [entry for entry in tells.values() if entry["p_holm"] is not None]
    if not tested:
        return 0, 0, None
    top = min(tested, key=lambda entry: entry["p_holm"])
    return int(top["longer"]), int(top["longer"] + top["shorter"]), float(top["p_holm"])


def _duplicate(trial: Trial, rng: DesignRng) -> Pick:
    pick, fired = duplicate_pick(trial.options, rng)
    return Pick(trial=trial.number, judge="", pick=pick, bot={"name": "duplicate", "fired": fired})


def _made(
    kind: str,
    trial: Trial,
    choice: tuple[int | str, bool | None],
    nicknames: tuple[str, str] | None,
) -> Pick:
    pick, fired = choice
    how = {"name": kind} if fired is None else {"name": kind, "fired": fired}
    return Pick(trial=trial.number, judge="", pick=pick, nicknames=nicknames, bot=how)


def displayed_by_side(
    design: DesignRecord, trials: Sequence[Trial], slots: Sequence[Slot] | None = None
) -> dict[str, list[str]]:
    """The displayed texts of each side, in trial and slot order (``slots``: the design's
    `plan_slots`, when the caller has them)."""
    texts: dict[str, list[str]] = {side: [] for side in candidates_of(design)}
    options = {t.number: t.options for t in trials}
    for slot in plan_slots(design) if slots is None else slots:
        texts[slot.side].append(options[slot.trial][slot.slot - 1])
    return texts


def _finish_reason(row: Mapping[str, Any] | None) -> str | None:
    if row is None:
        return None
    # The census counts content_filter endings as refusals; an explicit refusal is one too.
    return "content_filter" if row.get("kind") == "refusal" else row.get("finish_reason")


def census_by_model(
    design: DesignRecord,
    trials: Sequence[Trial],
    state: SlotState | None,
    slots: Sequence[Slot] | None = None,
    censuses: Censuses | None = None,
) -> JsonObject:
    """Per-model formatting census of what the judge saw (``censuses``: each option's,
    counted already by `read_answers`)."""
    slots = plan_slots(design) if slots is None else slots
    counted: dict[str, list[TextCensus]] = {side: [] for side in candidates_of(design)}
    if censuses is None:
        for side, texts in displayed_by_side(design, trials, slots).items():
            counted[side] = [take_census(text) for text in texts]
    else:
        for slot in slots:
            counted[slot.side].append(censuses[slot.trial][slot.slot - 1])
    census: JsonObject = {}
    for side in candidates_of(design):
        reasons = None
        if state is not None:
            reasons = [
                _finish_reason(state.generated.get((s.trial, s.slot)))
                for s in slots
                if s.side == side
            ]
        result = model_census(design["models"][side]["model"], counted[side], reasons)
        census[side] = result.to_dict()
    band = design["normalization"]["length_band"]
    if band is not None:
        for side in candidates_of(design):  # outside_band, from the words the census counted
            census[side]["outside_length_band"] = sum(
                not band["lo"] <= text.words <= band["hi"] for text in counted[side]
            )
    return census


def run_checks(
    design: DesignRecord,
    state: SlotState,
    runner: CommandRunner | None,
    slots: Sequence[Slot] | None = None,
) -> JsonObject | None:
    """Pass rates per model for prompts that carry a check, and McNemar's exact paired test.

    Pairs are per trial: one response per side (for the triangle's doubled side, the draw in
    the lower slot), so each prompt contributes one (A passes?, B passes?) pair.
    """
    checks = {p["id"]: p["check"] for p in design["prompts"] if "check" in p}
    used = [e for e in design["arrangement"] if e["prompt_id"] in checks]
    if not used:
        return None
    per_response: dict[str, list[bool]] = {side: [] for side in candidates_of(design)}
    pairs: list[tuple[bool, bool]] = []
    not_run = 0
    first_of: dict[tuple[int, str], bool] = {}
    for slot in plan_slots(design) if slots is None else slots:
        if slot.prompt_id not in checks:
            continue
        row = state.generated.get((slot.trial, slot.slot))
        if row is None or row["status"] != "ok":
            continue
        outcome = evaluate(checks[slot.prompt_id], original_text(row), runner)
        if outcome is None:
            not_run += 1
            continue
        per_response[slot.side].append(outcome)
        first_of.setdefault((slot.trial, slot.side), outcome)
    if shares_answers(design):  # pass rates per candidate; no A/B pairs to test
        return {
            "prompts": len({entry["prompt_id"] for entry in used}),
            "not_run": not_run,
            "pass": {
                side: {"passed": sum(results), "total": len(results)}
                for side, results in per_response.items()
            },
            "paired": None,
        }
    for entry in used:
        a, b = first_of.get((entry["trial"], "A")), first_of.get((entry["trial"], "B"))
        if a is not None and b is not None:
            pairs.append((a, b))
    a_only = sum(1 for a, b in pairs if a and not b)
    b_only = sum(1 for a, b in pairs if b and not a)
    discordant = a_only + b_only
    return {
        "prompts": len(used),
        "not_run": not_run,
        "pass": {
            side: {"passed": sum(results), "total": len(results)}
            for side, results in per_response.items()
        },
        "paired": {
            "pairs": len(pairs),
            "a_only": a_only,
            "b_only": b_only,
            "p_value": binomial_test(a_only, discordant, 0.5).p_value if discordant else 1.0,
            "test": "McNemar exact (two-sided binomial on discordant pairs)",
        },
    }


def build_audit(
    design: DesignRecord,
    design_sha256: str,
    trials: Sequence[Trial],
    responses: Sequence[JsonObject] | None,
    runner: CommandRunner | None = None,
    *,
    state: SlotState | None = None,
) -> AuditRecord:
    """The ``audit.json`` document (``state``: ``SlotState.from_rows(responses)``, when the
    caller has it already)."""
    if responses is None:
        state = None
    elif state is None:
        state = SlotState.from_rows(responses)
    slots = plan_slots(design)  # once, not once per use
    censuses: Censuses | None = None
    made: dict[str, Choices] = {}
    if not shares_answers(design):  # the bots read what the census reads
        censuses, made = read_answers(design, trials)
    census = census_by_model(design, trials, state, slots, censuses)
    del censuses  # read: each answer's census is in the totals now
    audit: AuditRecord = {
        "schema": schema_tag("audit"),
        "design_sha256": design_sha256,
        "protocol": design["protocol"],
        "bots": {kind: replay_bot(design, trials, kind, made.get(kind)) for kind in BOT_KINDS},
        "census": census,
        "checks": run_checks(design, state, runner, slots) if state is not None else None,
        "laundered": design["normalization"]["launder"] is not None,
        "responses_seen": None
        if state is None
        else sum(1 for row in responses or () if row.get("stage") != LAUNDER),
        "responses_missing": None if state is None else missing_responses(design, state, slots),
    }
    if shares_answers(design):
        audit["candidates"] = list(candidates_of(design))
    record = design["normalization"].get("identity_strip")
    if record is not None and state is not None:
        audit["identity_stripping"] = identity_stripping(design, state, record, slots)
    return audit


def identity_stripping(
    design: DesignRecord, state: SlotState, record: Mapping[str, Any], slots: Sequence[Slot]
) -> JsonObject:
    """What identity stripping replaced in the texts the judge saw (the laundered rows when
    the design launders), per side and per term. Side-dependent: audit.json only, printed by
    ``bt-audit --show``."""
    rows = state.laundered if design["normalization"]["launder"] is not None else state.generated
    sides = candidates_of(design)
    mentions = dict.fromkeys(sides, 0)
    touched = dict.fromkeys(sides, 0)
    shown = dict.fromkeys(sides, 0)
    terms: dict[str, JsonObject] = {}
    for slot in slots:
        row = rows.get((slot.trial, slot.slot))
        if row is None or row["status"] != "ok":
            continue
        shown[slot.side] += 1
        counts: Mapping[str, int] = row.get("identity_stripped") or {}
        if counts:
            touched[slot.side] += 1
        for term, n in counts.items():
            mentions[slot.side] += n
            entry = terms.setdefault(
                term, {"mentions": dict.fromkeys(sides, 0), "responses": dict.fromkeys(sides, 0)}
            )
            entry["mentions"][slot.side] += n
            entry["responses"][slot.side] += 1
    return {
        "enabled": bool(record.get("enabled")),
        "token": str(record.get("token", "")),
        "mentions": mentions,
        "responses": touched,
        "shown": shown,
        "terms": dict(sorted(terms.items())),
    }


def missing_responses(
    design: DesignRecord, state: SlotState, slots: Sequence[Slot] | None = None
) -> int:
    """Slots of the design without an answered row: a responses file cut short, or a run
    whose failures were never fetched again. The census and checks cover only what is there,
    so the audit says how much is not."""
    return sum(
        1
        for slot in (plan_slots(design) if slots is None else slots)
        if (row := state.generated.get((slot.trial, slot.slot))) is None or row["status"] != "ok"
    )
