"""What a report says in words beyond the statement: the channels and notes every reader
must see, the result screen's three lines, the next step, and the one line a void analysis
prints. Wording follows the numbers; nothing here computes a statistic. Pure; opens no file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from blindtest.analysis.tells import CENSUS_FIGURES
from blindtest.errors import BadInput
from blindtest.model.candidates import candidates_of, shown_name
from blindtest.model.derived import dropped_sentence
from blindtest.model.identity import added_terms
from blindtest.model.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from blindtest.model.sides import identity_terms, parse_param
from blindtest.present.hints import SIMULATOR_URL
from blindtest.reportfmt import count, format_p, format_p_against, pct
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.transport.addresses import DEFAULT_BASE_URL, is_loopback


def channels(design: DesignRecord) -> tuple[list[str], list[str]]:
    """(open, closed) channels, as the report states them."""
    norm = design["normalization"]
    closed = ["position (seeded, balanced)", "latency (all responses prefetched)"]
    identity = norm.get("identity_strip")  # absent in designs made before identity stripping
    names_open = []
    if identity is not None and identity["enabled"]:
        closed.append("model names and self-identification (identity stripping)")
    elif identity is not None:
        names_open.append("model names and self-identification (identity stripping off)")
    if norm["launder"] is not None:
        return ["content as rewritten by the laundering model", *names_open], [
            *closed,
            "formatting, wording and length of the originals (laundered)",
        ]
    opened = ["content", "wording and style", *names_open]
    if norm["strip_formatting"]:
        closed.append("formatting (stripped)")
    else:
        opened.append("formatting")
    if norm["truncate_match"]:
        closed.append("length (cut to the shortest in each trial)")
    elif norm["length_band"] is not None:
        band = norm["length_band"]
        opened.append(f"length (narrowed: both asked for {band['lo']}..{band['hi']} words)")
    else:
        opened.append("length")
    return opened, closed


def notes(design: DesignRecord) -> list[str]:
    """Sentences every reader of this run must see."""
    out = []
    dropped = dropped_sentence(design)
    if dropped is not None:
        out.append(dropped)
    launder = design["normalization"]["launder"]
    if launder is not None:
        out.append(
            f"LAUNDERED RUN: a third model ({launder['model']}) rewrote every response. The "
            "result speaks to the laundered forms only: laundering may erase real differences "
            "or impose its own uniform errors, so a null result says nothing about the originals."
        )
    if design["demo"]:
        simulated = all(
            m["model"].startswith("sim-") and is_loopback(m["base_url"])
            for m in design["models"].values()
        )
        what = (
            "bundled generic prompts and simulated models"
            if simulated
            else ("bundled generic prompts")
        )
        out.append(
            f"Demo run: {what}. It shows how blindtest works and says nothing about your "
            "models on your workload."
        )
    temperatures = {m["params"]["temperature"] for m in design["models"].values() if "params" in m}
    if design["source"]["kind"] == "dirs":
        out.append(
            "Imported outputs: the responses came from files, not from endpoints; the result "
            "speaks to those files, and to the models only as far as one identical harness "
            "produced them."
        )
    if 0 in temperatures:
        out.append(
            "Generated at temperature 0: two draws from one model would be identical, so the "
            "triangle test cannot be used; pair mode asks for consistent nicknames instead."
        )
    out.append(
        "Shown to the judge: the prompt and the responses in seeded positions. Never shown "
        "before this report: model names, which side is which, timing, or any running score."
    )
    out.append(
        "This is a statement about these prompts, these judges and these model builds; it does "
        "not transfer to other workloads or to a later build behind the same name."
    )
    return out


def _size_sentence(fields: Mapping[str, Any]) -> str | None:
    pd = fields.get("pd")
    if not pd or pd.get("hi") is None or not fields.get("n"):
        return None
    verdict = fields.get("picks_verdict", fields["verdict"])
    if fields.get("similarity") is not None and verdict != "distinguished":
        return str(fields["similarity"]["statement"])
    if verdict == "distinguished":
        return (
            f"the difference was visible on about {pct(pd['estimate'])} of these prompts "
            f"(95% interval {pct(pd['lo'])} to {pct(pd['hi'])}), after discounting lucky "
            "guesses."
        )
    return (
        f"if a difference exists, it shows on at most {pct(pd['hi'])} of these prompts (upper "
        "end of the 95% interval): a bound, not an equivalence."
    )


def _preference_lead(design: DesignRecord, fields: Mapping[str, Any]) -> tuple[str, str]:
    """(headline, size) of two candidates: the winner's (or the leader's) rate first."""
    wins, losses, ties = fields["wins"], fields["losses"], fields["ties"]
    untied = wins + losses
    first, second = candidates_of(design)
    rate = fields["pc"]
    left_out = (fields.get("excluded") or {}).get("n") or 0
    dropped = (
        f"; {count(left_out, 'comparison')} excluded, neither wins nor ties" if left_out else ""
    )
    if untied == 0:
        every = "Every comparison counted" if left_out else "Every comparison"
        return f"{every} was a tie ({ties}{dropped}): no side is preferred.", ""
    lead, won = (first, wins) if wins >= losses else (second, losses)
    lo, hi = (rate["lo"], rate["hi"]) if lead == first else (1 - rate["hi"], 1 - rate["lo"])
    who = shown_name(design, lead)
    share = won / untied
    size = (
        f"{who} won {pct(share)} of untied comparisons (Wilson 95% interval {pct(lo)} to "
        f"{pct(hi)}); {count(ties, 'tie')}, excluded from the rate{dropped}."
    )
    verdict = str(fields.get("picks_verdict", fields["verdict"]))
    if verdict.endswith("preferred"):
        return f"{who} is preferred: it won {won} of {untied} untied comparisons.", size
    return (
        f"No side is preferred yet: {who} won {won} of {untied} untied comparisons, which is "
        "not enough to call.",
        size,
    )


def _revealed_void_summary(design: DesignRecord, fields: Mapping[str, Any]) -> JsonObject:
    """A void run shown with --reveal-void: the figures so far, each said not to be valid."""
    judged = min((fields.get("judged") or {}).values(), default=fields.get("n") or 0)
    headline = (
        f"Void: only {judged} of {design['trials']} trials were judged, so this is not a "
        "result; the picks so far are shown because --reveal-void asked for them."
    )
    p_value, test = fields.get("p_value"), fields.get("test")
    sure = (
        f"none: {format_p(p_value)} ({test}) is not valid for an unfinished fixed design."
        if p_value is not None and test
        else None
    )
    pd = fields.get("pd")
    size = (
        f"none yet: so far pd {pct(pd['estimate'])} (95% interval {pct(pd['lo'])} to "
        f"{pct(pd['hi'])}), an interval that is not valid either."
        if pd and pd.get("hi") is not None and fields.get("n")
        else None
    )
    return {"verdict": headline, "sure": sure, "size": size}


def screen_summary(design: DesignRecord, fields: Mapping[str, Any]) -> JsonObject:
    """The result screen's first three lines, in order: the verdict in one sentence, how sure,
    how big. Wording lives here with the statement, so the two never disagree."""
    verdict = fields["verdict"]
    alpha = design["alpha"]
    statement = str(fields["statement"])
    test = fields.get("test")
    p_value = fields.get("p_value")
    sure = (
        f"{format_p_against(p_value, alpha)}, {test}; alpha {alpha:g}."
        if p_value is not None and test
        else None
    )
    if verdict == "unusable":
        return {"verdict": statement, "sure": None, "size": None}
    if verdict == "void":
        return _revealed_void_summary(design, fields)
    prefix = ""
    if verdict == "incomplete":
        prefix = statement.split("; ", 1)[0] + ". The picks alone: "
        statement = statement.split("The picks alone say: ", 1)[1]
    if PROTOCOLS[design["protocol"]].prefers and len(candidates_of(design)) > 2:
        # From three candidates the ranking's first sentence leads; its tables follow.
        lines = (fields.get("candidates") or {}).get("headline") or [statement]
        return {"verdict": prefix + str(lines[0]), "sure": None, "size": None}
    if PROTOCOLS[design["protocol"]].prefers:
        headline, size = _preference_lead(design, fields)
        return {"verdict": prefix + headline, "sure": sure, "size": size or None}
    headline = prefix + statement.split(" (", 1)[0].rstrip(":")
    if design["sequential"] and fields.get("sequential_result"):
        seq = fields["sequential_result"]
        crossed = seq["crossed_at"]
        sure = (
            f"anytime-valid {format_p(p_value)}, from the sequential e-process against chance "
            "1/3 (a running measure of evidence, valid however early the run stops); "
        ) + (
            f"the evidence (e-value) crossed {seq['threshold']:g} = 1/alpha at trial {crossed}."
            if crossed is not None
            else f"the evidence (e-value) reached {seq['e_value']:.2f}, short of "
            f"{seq['threshold']:g} = 1/alpha."
        )
    size_text = _size_sentence(fields)
    if design["sequential"] and size_text:
        size_text += " (A fixed-n interval: it is not adjusted for stopping early.)"
    return {"verdict": headline + ".", "sure": sure, "size": size_text}


def _side_args(design: DesignRecord) -> list[str]:
    """Sampling options (shared when the sides agree) and each side's own configuration."""
    args: list[str] = []
    params = {s: design["models"][s].get("params") or {} for s in ("A", "B")}
    for name, option, default in (
        ("temperature", "temperature", 1.0),
        ("max_tokens", "max-tokens", None),
    ):
        a, b = params["A"].get(name), params["B"].get(name)
        values = [("", a)] if a == b else [("a-", a), ("b-", b)]
        for prefix, value in values:
            if value not in (None, default):
                args += [
                    f"--{prefix}{option}",
                    f"{value:g}" if isinstance(value, float) else str(value),
                ]
    shared_system = design.get("system")
    if shared_system:
        args += ["--system", shared_system]
    for side in ("A", "B"):
        spec, lower = design["models"][side], side.lower()
        for name in ("system", "template", "label"):
            if spec.get(name) is not None:
                args += [f"--{lower}-{name}", spec[name]]
        for key, value in (spec.get("extra_params") or {}).items():
            shown = orjson.dumps(value).decode()
            if isinstance(value, str) and _reads_back(value):
                shown = value  # reads back as the same string
            args += [f"--{lower}-param", f"{key}={shown}"]
    return args


def _reads_back(text: str) -> bool:
    """Whether ``--a-param k=TEXT`` gives the string TEXT (not JSON, nor refused as JSON)."""
    try:
        return bool(parse_param("", f"k={text}")[1] == text)
    except BadInput:
        return False


def _side_url(base_url: str, demo: bool) -> str:
    """A side's URL in a suggested command. A demo's simulator lives only while the demo runs,
    on a port it picked: the command names one on a fixed port, and the lines under it say
    how to start it (``hints.setup_command``)."""
    return SIMULATOR_URL if demo and is_loopback(base_url) else base_url


def _same_design_args(design: DesignRecord) -> list[str]:
    """bt-design arguments that rebuild this design's sides, protocol, size and seed."""
    protocol = design["protocol"]
    args = ["NEW-RUN", *(["--demo"] if design["demo"] else ["--prompts", "PROMPTS"])]
    for side in ("A", "B"):
        spec = design["models"][side]
        args += [f"--{side.lower()}", spec["model"]]
        url = _side_url(spec["base_url"], design["demo"])
        if url != DEFAULT_BASE_URL:
            args += [f"--{side.lower()}-url", url]
    if protocol != DEFAULT_PROTOCOL:
        args += ["--protocol", protocol]
    args += _side_args(design)
    if design["alpha"] != 0.05:
        args += ["--alpha", f"{design['alpha']:g}"]
    if design["sequential"]:
        args.append("--sequential")
    if design["similarity_pd0"] is not None:
        args += ["--similarity", f"{design['similarity_pd0']:g}"]
    identity = design["normalization"].get("identity_strip")
    if identity is not None and not identity["enabled"]:
        args.append("--no-strip-identity")
    elif identity is not None and added_terms(identity, identity_terms(design)):
        # The design records the terms, not the file they came from: the user names it.
        args += ["--strip-identity-words", "IDENTITY-WORDS"]
    controls = design.get("controls", 0)
    if controls:  # hidden controls: --trials counts the real trials
        shown = sum("control" in e for e in design["arrangement"])
        real = design["trials"] - shown
        return [*args, "--trials", str(real), "--controls", str(controls), "--seed", design["seed"]]
    return [*args, "--trials", str(design["trials"]), "--seed", str(design["seed"])]


def next_step(design: DesignRecord, fields: Mapping[str, Any]) -> JsonObject | None:
    """What to run next, as a stage and its arguments (the screen turns it into a command that
    works from where it is run): close the channel a bot explains, or plan a bigger design
    when a null is wide."""
    audit = fields.get("audit") or {}
    census = audit.get("census")
    norm = design["normalization"]
    protocol = design["protocol"]
    explained = " ".join(audit.get("sentences") or [])
    add: list[str] = []
    why: list[str] = []
    # Only a positive result has something a channel could explain: a null or an
    # inconclusive preference is not "explained by formatting".
    positive = fields["verdict"] not in ("not distinguished", "inconclusive", "void", "unusable")
    if census and positive:
        words = sorted(c["mean_words"] for c in census.values() if c["mean_words"] is not None)
        length_open = norm["length_band"] is None and not norm["truncate_match"]
        if length_open and words and "length" in explained:
            lo = max(1, int(round(words[0] * 0.8, -1)) or 10)
            hi = max(lo + 10, int(round(words[0] * 1.2, -1)))
            add += ["--length-band", f"{lo}..{hi}"]
            why.append("length")
        gaps = [abs((census["A"][f] or 0) - (census["B"][f] or 0)) for f in CENSUS_FIGURES]
        if not norm["strip_formatting"] and norm["launder"] is None and max(gaps) >= 1:
            add.append("--strip-formatting")
            why.append("formatting")
    if add:
        args = [*_same_design_args(design), *add]
        return {
            "why": (
                f"{' and '.join(why)} can explain this result; to learn whether "
                "anything else tells the models apart, run the same design with "
                f"{' and '.join(why)} closed"
            ),
            "stage": "design",
            "args": args,
        }
    pd = fields.get("pd") or {}
    if fields["verdict"] == "not distinguished" and (pd.get("hi") or 0) > 0.3:
        return {
            "why": (
                f"the null is wide (a difference on up to {pct(pd['hi'])} of prompts is not "
                "excluded); plan a bigger design that would catch one on 30%"
            ),
            "stage": "plan",
            "args": ["--protocol", protocol, "--pd", "0.3", "--target-power", "0.8"],
        }
    two = len(candidates_of(design)) == 2  # from three, no single win rate to plan for
    if PROTOCOLS[protocol].prefers and fields["verdict"] == "inconclusive" and two:
        return {
            "why": "no side is preferred yet; plan how many comparisons a 65% win rate needs",
            "stage": "plan",
            "args": ["--protocol", protocol, "--pc", "0.65", "--target-power", "0.8"],
        }
    return None


def void_line(report: Mapping[str, Any], run_dir: Path, finish: Any) -> str:
    """The one line a void analysis prints: k of n judged, why when a pick was torn, and the
    command that finishes the run (``finish(*args)`` makes it, e.g. ``hints.stage_command``)."""
    judged = report.get("judged") or {}
    files = (report.get("reading") or {}).get("picks") or []
    short = min(judged, key=lambda j: judged[j]) if judged else None
    k = judged.get(short, 0) if short is not None else 0
    # With a people's sample people are asked its comparisons, not the design's every one.
    sampled = report.get("people_trials_planned")
    total = f"the people's sample of {sampled}" if sampled is not None else report["trials_planned"]
    who = f"judge {short!r} " if len(judged) > 1 else ""
    args: list[str] = ["judge", str(run_dir)]
    held = next((f for f in files if short in f.get("judges", [])), files[0] if files else None)
    if held is not None and held["file"] != artifacts.PICKS:
        path = Path(held["file"])
        args += ["--out", str(path if path.is_absolute() else run_dir / path)]
    llm = ((held or {}).get("llm_judges") or {}).get(short) if short is not None else None
    url_hint = ""
    if short is not None and short.startswith("bot:"):
        # A bot does not resume a file: it rewrites its own picks, the same ones, in full.
        args += ["--judge", short, "--force"]
    elif llm is not None:
        # An LLM judge resumes: the same command asks only what is missing. Its URL's path is
        # not recorded (only the origin), so the line says where to point it.
        args += ["--judge", f"llm:{llm['model']}"]
        if llm.get("origin") and llm["origin"] != "https://api.openai.com":
            url_hint = f" (with the --judge-url at {llm['origin']} it ran with)"
    elif short is not None:  # a person: resumed under the same id, whoever runs the command
        args += ["--judge-id", short]
    torn = next((f for f in files if f.get("torn_line")), None)
    why = (
        f" (the last pick, {torn['file']} line {torn['torn_line']}, was cut short when written "
        "and was ignored)"
        if torn
        else ""
    )
    return f"void: {who}{k} of {total} judged{why}; finish with: {finish(*args)}{url_hint}"


def torn_why(reading: Mapping[str, Any] | None, judged: int) -> str:
    torn = [f for f in (reading or {}).get("picks", []) if f.get("torn_line")]
    if not torn:
        return ""
    first = torn[0]
    return (
        f" The pick on {first['file']} line {first['torn_line']} was cut short when it was "
        f"written (an incomplete final line) and was ignored, so trial {judged + 1} must be "
        "judged again."
    )
