"""Run directories for the report-stage tests (bt-audit, bt-analyze, bt-verify, blindtest run).

A run here is a real design (``build_design`` + ``write_design``) with synthetic but
schema-valid ``responses.jsonl``, ``trials.jsonl`` and ``generation.json`` (bt-generate is not
needed to judge, audit or analyze), and picks constructed to hit a chosen score. The texts make
the answer key visible to the test's reader: by default every response is a list of distinct
tokens (so no two are near-duplicates) and side A writes twice as many words as side B, so the
length bot always finds the odd response of a triangle and always prefers A.

The last section holds the independent reference values the tests compare reports with:
exact rational arithmetic (``fractions.Fraction`` over Python integers) and mpmath, never
``blindtest.stats`` or scipy's binomial code.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
from click.testing import CliRunner, Result

from blindtest.designing.build import DesignOptions, ModelSpec, build_design
from blindtest.generation.summary import generation_record
from blindtest.model.prompts import Prompt
from blindtest.model.slots import Slot, plan_slots
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord

PROVENANCE: dict[str, Any] = {"blindtest": "test", "python": "3", "packages": {}, "git": None}
SEED = "report-tests"

#: ``text(slot, entry)``: the response for one slot; ``entry`` is its arrangement entry.
Texts = Callable[[Slot, Mapping[str, Any]], str]


# --------------------------------------------------------------------------- the CLI


def cli(*args: Any, input: str | None = None) -> Result:
    """``blindtest <args>`` in-process, for module-scoped fixtures (``invoke`` is per test)."""
    from blindtest.cli import cli as group

    return CliRunner().invoke(
        group,
        [str(a) for a in args],
        input=input,
        env={"BLINDTEST_DEBUG": None},
        prog_name="blindtest",
        catch_exceptions=False,
    )


# --------------------------------------------------------------------------- designs


def numbered_prompts(
    n: int,
    *,
    tags: Callable[[int], Sequence[str]] | None = None,
    check: Callable[[int], dict[str, str] | None] | None = None,
) -> list[Prompt]:
    return [
        Prompt(
            id=f"p{i:03d}",
            text=f"Prompt number {i}: explain topic {i}.",
            line=i,
            tags=tuple(tags(i)) if tags else (),
            check=check(i) if check else None,
        )
        for i in range(1, n + 1)
    ]


def make_design(
    protocol: str = "triangle",
    trials: int = 20,
    *,
    seed: str = SEED,
    prompts: Sequence[Prompt] | None = None,
    model_a: str = "model-a",
    model_b: str = "model-b",
    temperature: float = 1.0,
    **options: Any,
) -> DesignRecord:
    """A design document; ``options`` go to ``DesignOptions`` (sequential, alpha, demo, ...)."""
    return build_design(
        prompts if prompts is not None else numbered_prompts(trials),
        DesignOptions(
            a=ModelSpec(model_a, temperature=temperature),
            b=ModelSpec(model_b, temperature=temperature),
            seed=seed,
            protocol=protocol,
            trials=trials,
            **options,
        ),
        PROVENANCE,
    )


def write_design_run(root: Path, design: Mapping[str, Any], name: str = "run") -> Path:
    run_dir = root / name
    run_dir.mkdir(parents=True)
    artifacts.write_design(run_dir, dict(design))
    return run_dir


def load(run_dir: Path) -> DesignRecord:
    return artifacts.load_design(run_dir).design


# --------------------------------------------------------------------------- responses


def tokens(label: str, count: int) -> str:
    """``count`` words, none shared with any other label's text."""
    return " ".join(f"{label}w{i}" for i in range(count))


def length_tells(slot: Slot, entry: Mapping[str, Any]) -> str:
    """Side A writes 20 words, side B 10: length gives every answer away."""
    return tokens(f"t{slot.trial}s{slot.slot}", 20 if slot.side == "A" else 10)


def no_tells(slot: Slot, entry: Mapping[str, Any]) -> str:
    """Every response 12 words: the length bot has nothing to go on."""
    return tokens(f"t{slot.trial}s{slot.slot}", 12)


def response_row(
    design: Mapping[str, Any], slot: Slot, text: str, finish_reason: str = "stop"
) -> dict[str, Any]:
    words = len(text.split())
    return {
        "schema": artifacts.schema_tag("responses"),
        "trial": slot.trial,
        "slot": slot.slot,
        "side": slot.side,
        "prompt_id": slot.prompt_id,
        "stage": "generate",
        "model": design["models"][slot.side]["model"],
        "status": "ok",
        "kind": "length" if finish_reason == "length" else "ok",
        "text": text,
        "finish_reason": finish_reason,
        "truncated": finish_reason == "length",
        "refusal": None,
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": words,
            "total_tokens": 10 + words,
        },
        "latency_ms": 100.0 + slot.slot,
        "attempts": 1,
        "seed": 1000 * slot.trial + slot.slot,
    }


def add_responses(
    run_dir: Path,
    text: Texts = length_tells,
    *,
    finish_reason: Callable[[Slot], str] | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    generation: bool = True,
) -> list[dict[str, Any]]:
    """Write responses.jsonl, trials.jsonl (the options in slot order) and generation.json."""
    loaded = artifacts.load_design(run_dir)
    design = loaded.design
    entries = {e["trial"]: e for e in design["arrangement"]}
    rows = [
        response_row(
            design,
            slot,
            text(slot, entries[slot.trial]),
            finish_reason(slot) if finish_reason else "stop",
        )
        for slot in plan_slots(design)
    ]
    artifacts.write_jsonl(run_dir / artifacts.RESPONSES, rows, "responses", force=False)
    prompts = {p["id"]: p["text"] for p in design["prompts"]}
    trials = []
    for entry in design["arrangement"]:
        options = [r["text"] for r in rows if r["trial"] == entry["trial"]]
        trials.append(
            {
                "schema": artifacts.schema_tag("trials"),
                "trial": entry["trial"],
                "prompt": prompts[entry["prompt_id"]],
                "options": options,
            }
        )
    artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=False)
    if generation:
        record = generation_record(design, loaded.sha256, rows, dict(prices or {}), 1.0)
        artifacts.write_json(run_dir / artifacts.GENERATION, record, "generation")
    return rows


def make_run(
    root: Path,
    protocol: str = "triangle",
    trials: int = 20,
    *,
    name: str = "run",
    text: Texts | None = length_tells,
    prices: Mapping[str, tuple[float, float]] | None = None,
    **design_options: Any,
) -> Path:
    """A run directory with a design and (unless ``text`` is None) responses and trials."""
    run_dir = write_design_run(root, make_design(protocol, trials, **design_options), name)
    if text is not None:
        add_responses(run_dir, text, prices=prices)
    return run_dir


# --------------------------------------------------------------------------- picks


def _chosen(trials: Sequence[int], which: int | Collection[int]) -> set[int]:
    """``which`` trials: a count means the first ``which`` of ``trials``."""
    return set(trials[:which]) if isinstance(which, int) else set(which)


def triangle_picks(
    design: Mapping[str, Any],
    correct: int | Collection[int],
    *,
    judge: str = "alice",
    trials: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """Picks on ``trials`` (default all) that are right exactly on the ``correct`` ones."""
    numbers = list(trials) if trials is not None else [e["trial"] for e in design["arrangement"]]
    right = _chosen(numbers, correct)
    odd = {e["trial"]: e["odd_position"] for e in design["arrangement"]}
    return [
        {"trial": t, "judge": judge, "pick": odd[t] if t in right else odd[t] % 3 + 1}
        for t in numbers
    ]


def pair_picks(
    design: Mapping[str, Any],
    consistent: int | Collection[int],
    *,
    nicknames: tuple[str, str] = ("Xavier", "Yolanda"),
    judge: str = "alice",
) -> list[dict[str, Any]]:
    """Nicknames for option 1, consistent with "first nickname = A" on ``consistent`` trials."""
    numbers = [e["trial"] for e in design["arrangement"]]
    agree = _chosen(numbers, consistent)
    first, second = nicknames
    picks = []
    for entry in design["arrangement"]:
        a_first = entry["left"] == "A"
        says_first = a_first if entry["trial"] in agree else not a_first
        picks.append(
            {
                "trial": entry["trial"],
                "judge": judge,
                "pick": first if says_first else second,
                "nicknames": [first, second],
            }
        )
    return picks


def balanced_outcomes(design: Mapping[str, Any], wins: int, losses: int) -> dict[int, str]:
    """Per trial "A", "B" or "tie" (the rest), spread so that "left" is chosen about half the
    time: each side's wins are dealt alternately to trials where A is left and where B is."""
    a_left = [e["trial"] for e in design["arrangement"] if e["left"] == "A"]
    b_left = [e["trial"] for e in design["arrangement"] if e["left"] == "B"]
    outcome = dict.fromkeys(a_left + b_left, "tie")
    queues = [a_left, b_left]
    turn = 0
    for side, count in (("A", wins), ("B", losses)):
        for _ in range(count):
            queue = queues[turn % 2] if queues[turn % 2] else queues[(turn + 1) % 2]
            outcome[queue.pop(0)] = side
            turn += 1
    return outcome


def preference_picks(
    design: Mapping[str, Any],
    outcome: Mapping[int, str],
    *,
    judge: str = "alice",
) -> list[dict[str, Any]]:
    """The left/right/tie picks that prefer ``outcome[trial]`` ("A", "B" or "tie")."""
    picks = []
    for entry in design["arrangement"]:
        wanted = outcome[entry["trial"]]
        pick = "tie" if wanted == "tie" else ("left" if wanted == entry["left"] else "right")
        picks.append(
            {"trial": entry["trial"], "judge": judge, "pick": pick, "reason": f"chose {pick}"}
        )
    return picks


def write_picks(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    """A picks file from records (the schema tag added), one line each."""
    lines = [artifacts.dump_line({"schema": artifacts.schema_tag("picks"), **r}) for r in records]
    path.write_bytes(b"".join(lines))
    return path


def read_report(run_dir: Path) -> dict[str, Any]:
    return artifacts.read_json(run_dir / artifacts.REPORT, "report")


# --------------------------------------------------------------------------- reference values
# Exact: Fraction over Python integers. Clopper-Pearson, Wilson and the Thurstonian integral:
# mpmath 1.3 at 30 digits (``workdps``, so the global precision is left alone); the beta CDF
# root is solved with findroot's bracketing Pegasus method.

DPS = 30


def binomial_tail_at_least(k: int, n: int, p: Fraction) -> Fraction:
    """``P(X >= k)`` for ``X ~ Bin(n, p)``, exactly."""
    return sum(
        (math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(max(k, 0), n + 1)),
        Fraction(0),
    )


def binomial_tail_at_most(k: int, n: int, p: Fraction) -> Fraction:
    """``P(X <= k)`` for ``X ~ Bin(n, p)``, exactly."""
    return sum((math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1)), Fraction(0))


def triangle_p(k: int, n: int) -> Fraction:
    """One-sided exact triangle p-value ``P(X >= k)``, ``X ~ Bin(n, 1/3)``."""
    return binomial_tail_at_least(k, n, Fraction(1, 3))


def two_sided_half(k: int, n: int) -> Fraction:
    """R's binom.test two-sided p at p0 = 1/2: the total probability of every outcome no more
    likely than the observed one, "no more likely" with R's relative tolerance 1 + 1e-7."""
    observed = math.comb(n, k)
    kept = sum(
        math.comb(n, i) for i in range(n + 1) if math.comb(n, i) * 10**7 <= observed * (10**7 + 1)
    )
    return min(Fraction(1), Fraction(kept, 2**n))


@functools.cache
@mpmath.workdps(DPS)
def clopper_pearson(k: int, n: int, level: str = "0.95") -> tuple[float, float]:
    """Two-sided Clopper-Pearson bounds: roots of the regularized incomplete beta."""
    tail = (1 - mpmath.mpf(level)) / 2

    def root(a: int, b: int, target: Any) -> float:
        def gap(x: Any) -> Any:
            return mpmath.betainc(a, b, 0, x, regularized=True) - target

        return float(mpmath.findroot(gap, (mpmath.mpf(0), mpmath.mpf(1)), solver="pegasus"))

    lo = 0.0 if k == 0 else root(k, n - k + 1, tail)
    hi = 1.0 if k == n else root(k + 1, n - k, 1 - tail)
    return lo, hi


@functools.cache
@mpmath.workdps(DPS)
def one_sided_upper(k: int, n: int, level: str = "0.95") -> float:
    """One-sided Clopper-Pearson upper bound at ``level``."""
    if k == n:
        return 1.0
    target = mpmath.mpf(level)

    def gap(x: Any) -> Any:
        return mpmath.betainc(k + 1, n - k, 0, x, regularized=True) - target

    return float(mpmath.findroot(gap, (mpmath.mpf(0), mpmath.mpf(1)), solver="pegasus"))


@mpmath.workdps(DPS)
def wilson(k: int, n: int, level: str = "0.95") -> tuple[float, float]:
    """Wilson (1927) score interval without continuity correction."""
    z = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf(level))
    p, n_ = mpmath.mpf(k) / n, mpmath.mpf(n)
    centre = p + z**2 / (2 * n_)
    spread = z * mpmath.sqrt(p * (1 - p) / n_ + z**2 / (4 * n_**2))
    scale = 1 + z**2 / n_
    return float((centre - spread) / scale), float((centre + spread) / scale)


@mpmath.workdps(DPS)
def pair_dprime(pc: float) -> float:
    """Signed 2AFC d' = sqrt(2) Phi^-1(Pc) = 2 erfinv(2 Pc - 1)."""
    return float(2 * mpmath.erfinv(2 * mpmath.mpf(pc) - 1))


def pd_of(pc: float) -> float:
    """Proportion of discriminators ``(3 Pc - 1) / 2``, clipped to [0, 1]."""
    return min(1.0, max(0.0, (3 * pc - 1) / 2))


def e_value(k: int, n: int) -> Fraction:
    """The mixture e-value after ``k`` correct of ``n`` triangle trials, exactly:
    ``(3/2) int_{1/3}^1 p^k (1-p)^(n-k) dp / ((1/3)^k (2/3)^(n-k))``, the integral expanded
    with q = 1 - p as ``sum_j C(k, j) (-1)^j (2/3)^(m+j+1) / (m+j+1)``, m = n - k."""
    m = n - k
    integral = sum(
        (
            Fraction(math.comb(k, j) * (-1) ** j) * Fraction(2, 3) ** (m + j + 1) / (m + j + 1)
            for j in range(k + 1)
        ),
        Fraction(0),
    )
    return Fraction(3, 2) * integral / (Fraction(1, 3) ** k * Fraction(2, 3) ** m)


@mpmath.workdps(DPS)
def triangle_pc_of_dprime(dprime: float) -> float:
    """Thurstonian triangle Pc(d') = 2 int_0^inf [Phi(-z sqrt3 + d' sqrt(2/3)) +
    Phi(-z sqrt3 - d' sqrt(2/3))] phi(z) dz, by mpmath's tanh-sinh quadrature."""
    d = mpmath.mpf(dprime)
    sqrt3, shift = mpmath.sqrt(3), d * mpmath.sqrt(mpmath.mpf(2) / 3)

    def integrand(z: Any) -> Any:
        return (mpmath.ncdf(-z * sqrt3 + shift) + mpmath.ncdf(-z * sqrt3 - shift)) * mpmath.npdf(z)

    return float(2 * mpmath.quad(integrand, [0, shift / sqrt3, mpmath.inf]))


__all__ = [
    "PROVENANCE",
    "SEED",
    "Texts",
    "add_responses",
    "balanced_outcomes",
    "binomial_tail_at_least",
    "binomial_tail_at_most",
    "cli",
    "clopper_pearson",
    "e_value",
    "length_tells",
    "load",
    "make_design",
    "make_run",
    "no_tells",
    "numbered_prompts",
    "one_sided_upper",
    "pair_dprime",
    "pair_picks",
    "pd_of",
    "preference_picks",
    "read_report",
    "response_row",
    "tokens",
    "triangle_p",
    "triangle_pc_of_dprime",
    "triangle_picks",
    "two_sided_half",
    "wilson",
    "write_design_run",
    "write_picks",
]
