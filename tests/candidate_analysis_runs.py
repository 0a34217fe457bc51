"""Several-candidate run directories for the analysis, screen, report page and verify tests.

A run here is a real two-sided preference design (``report_runs.make_design``) rewritten to
the several-candidate form of the shared contract: ``candidates``, ``pairing``, ``models``
keyed by candidate name, and an arrangement from ``pairing.schedule`` (trial n = the n-th
comparison, ``prompt_id`` its prompt's id). Each candidate answers each prompt once: the
answer's row in ``responses.jsonl`` is owned by ``candidates.answer_owners`` (``side`` = the
candidate's name, usage tokens as bt-generate writes them); ``trials.jsonl`` shows each
comparison's two answers, left then right; ``generation.json`` holds each candidate's tokens
and cost from the prices given, as bt-generate sums them per role.

The judge is a seeded bot that knows each candidate's true strength on the log-odds scale and
draws each comparison from Davidson's model (P(i) = e^s_i / D, P(tie) = nu e^((s_i+s_j)/2) / D),
so a test knows the order the analysis should recover. ``left_bias`` adds a pull towards the
left option (the position gate's target).

While the shipped schemas do not yet describe several-candidate designs and responses (the
design helper and the generation helper add that), ``accept_candidate_runs`` lets the schema
check pass them with the additions the contract names; once the shipped design schema knows
``candidates`` it changes nothing, and the shipped schemas are checked as they are.
"""

from __future__ import annotations

import contextlib
import copy
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from blindtest.model import candidates, pairing
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord

from report_runs import make_design, numbered_prompts, write_picks

SEED = "candidate-analysis"
#: Price per million tokens (input, output) of each candidate in the default runs.
PRICES = {
    "alpha": (3.0, 15.0),
    "beta": (1.0, 5.0),
    "gamma": (0.5, 2.0),
    "delta": (0.15, 0.6),
}
#: Completion tokens per answer of each candidate (so cost and tokens differ).
ANSWER_TOKENS = {"alpha": 60, "beta": 50, "gamma": 40, "delta": 30}


# --------------------------------------------------------------------------- schemas


def _schemas_know_candidates() -> bool:
    from blindtest.rundir.artifacts import validation

    documents = dict(validation._schema_documents())
    design = documents[f"{validation._SCHEMA_BASE}design.schema.json"]
    return "candidates" in design.get("properties", {})


SCHEMAS_KNOW_CANDIDATES = _schemas_know_candidates()


def _widened(documents: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    out = []
    for uri, schema in documents:
        doc = copy.deepcopy(schema)
        if uri.endswith("/common.schema.json"):
            doc["$defs"]["side"] = {"type": "string", "pattern": candidates.CANDIDATE_NAME.pattern}
        if uri.endswith("/design.schema.json"):
            props = doc["properties"]
            props["candidates"] = {"type": "array", "items": {"type": "string"}}
            props["pairing"] = {"type": "object"}
            props["models"].pop("required", None)
            props["models"]["additionalProperties"] = True
            props["arrangement"]["items"]["properties"]["right"] = {"type": "string"}
        out.append((uri, doc))
    return tuple(out)


@contextlib.contextmanager
def candidate_schemas() -> Iterator[None]:
    """Let the schema check accept several-candidate designs and responses while the shipped
    schemas lack them (see the module doc); a no-op once they have them."""
    if SCHEMAS_KNOW_CANDIDATES:
        yield
        return
    from blindtest.rundir.artifacts import validation

    original = validation._schema_documents
    widened = _widened(original())

    def clear() -> None:
        for name in ("_schema_documents", "_registry", "validator", "fast_validator"):
            function = getattr(validation, name)
            if hasattr(function, "cache_clear"):
                function.cache_clear()

    clear()
    validation._schema_documents = lambda: widened  # type: ignore[assignment]
    try:
        yield
    finally:
        validation._schema_documents = original
        clear()


@pytest.fixture
def accept_candidate_runs() -> Iterator[None]:
    """`candidate_schemas` for one test."""
    with candidate_schemas():
        yield


# --------------------------------------------------------------------------- designs


def candidate_design(
    names: Sequence[str] = ("alpha", "beta", "gamma", "delta"),
    prompts: int = 30,
    mode: str = "all",
    *,
    seed: str = SEED,
    tags: Mapping[int, Sequence[str]] | None = None,
    trials: int | None = None,
) -> DesignRecord:
    """A several-candidate preference design over ``prompts`` numbered prompts."""
    tagged = (lambda i: ("code",) if i % 2 else ("prose",)) if tags is None else tags.get
    base: dict[str, Any] = dict(
        make_design(
            "preference",
            prompts,
            seed=seed,
            prompts=numbered_prompts(prompts, tags=lambda i: tagged(i) or ()),
        )
    )
    comparisons = pairing.schedule(list(names), len(base["prompts"]), mode, seed, trials=trials)
    side = base["models"]["A"]
    base["candidates"] = list(names)
    base["pairing"] = {"version": pairing.PAIRING_VERSION, "mode": mode}
    base["models"] = {name: {**side, "model": f"model-{name}"} for name in names}
    base["trials"] = len(comparisons)
    base["arrangement"] = [
        {
            "trial": n,
            "prompt_id": base["prompts"][c.prompt]["id"],
            "left": c.left,
            "right": c.right,
        }
        for n, c in enumerate(comparisons, start=1)
    ]
    return base  # type: ignore[return-value]


def answer_text(prompt_id: str, name: str) -> str:
    return " ".join(f"{name}-{prompt_id}-w{i}" for i in range(12))


def write_candidate_run(
    root: Path,
    design: Mapping[str, Any],
    *,
    name: str = "run",
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> Path:
    """design.json, responses.jsonl (one row per answer, at its owner slot), trials.jsonl and
    generation.json (tokens and cost per candidate)."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    sha = artifacts.write_design(run_dir, dict(design))
    owners = candidates.answer_owners(design)
    rows = []
    for (prompt_id, who), (trial, slot) in sorted(owners.items(), key=lambda kv: kv[1]):
        completion = ANSWER_TOKENS.get(who, 20)
        rows.append(
            {
                "schema": artifacts.schema_tag("responses"),
                "trial": trial,
                "slot": slot,
                "side": who,
                "prompt_id": prompt_id,
                "stage": "generate",
                "model": design["models"][who]["model"],
                "served_model": design["models"][who]["model"],
                "status": "ok",
                "kind": "ok",
                "text": answer_text(prompt_id, who),
                "finish_reason": "stop",
                "truncated": False,
                "refusal": None,
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": completion,
                    "total_tokens": 10 + completion,
                },
                "latency_ms": 100.0 + slot,
                "attempts": 1,
                "seed": 1000 * trial + slot,
            }
        )
    artifacts.write_jsonl(run_dir / artifacts.RESPONSES, rows, "responses", force=False)
    texts = {e["id"]: e["text"] for e in design["prompts"]}
    trials = [
        {
            "schema": artifacts.schema_tag("trials"),
            "trial": entry["trial"],
            "prompt": texts[entry["prompt_id"]],
            "options": [
                answer_text(entry["prompt_id"], s) for s in (entry["left"], entry["right"])
            ],
        }
        for entry in design["arrangement"]
    ]
    artifacts.write_jsonl(run_dir / artifacts.TRIALS, trials, "trials", force=False)
    price = dict(PRICES if prices is None else prices)
    roles: dict[str, Any] = {}
    for who in design["candidates"]:
        own = [r for r in rows if r["side"] == who]
        tokens_in = sum(r["usage"]["prompt_tokens"] for r in own)
        tokens_out = sum(r["usage"]["completion_tokens"] for r in own)
        unit = price.get(who)
        roles[who] = {
            "model": design["models"][who]["model"],
            "responses": len(own),
            "failures": 0,
            "requests": len(own),
            "retries": 0,
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "truncated": 0,
            "refusals": 0,
            "outside_length_band": None,
            "mean_latency_ms": round(sum(r["latency_ms"] for r in own) / len(own), 3),
            "cost": None
            if unit is None
            else (tokens_in * unit[0] + tokens_out * unit[1]) / 1_000_000,
        }
    generation = {
        "schema": artifacts.schema_tag("generation"),
        "design_sha256": sha,
        "complete": True,
        "wall_seconds": 1.0,
        "prices": {who: {"input": p[0], "output": p[1]} for who, p in price.items()},
        "roles": roles,
        "identical_draws": None,
        "sessions": [{"wall_seconds": 1.0, "requests": len(rows), "rows": len(rows)}],
    }
    artifacts.write_json(run_dir / artifacts.GENERATION, generation, "generation")
    return run_dir


# --------------------------------------------------------------------------- the judge


def davidson_draw(rng: random.Random, s_left: float, s_right: float, nu: float) -> str:
    """ "left", "right" or "tie" from Davidson's model."""
    a, b = math.exp(s_left), math.exp(s_right)
    t = nu * math.exp((s_left + s_right) / 2)
    u = rng.random() * (a + b + t)
    return "left" if u < a else "right" if u < a + b else "tie"


def strength_picks(
    design: Mapping[str, Any],
    strengths: Mapping[str, float],
    *,
    judge: str = "bot:strength",
    seed: int = 7,
    nu: float = 0.5,
    left_bias: float = 0.0,
) -> list[dict[str, Any]]:
    """One pick per comparison from Davidson's model with the candidates' true ``strengths``;
    ``left_bias`` is added to the left option's strength (a judge drawn to position)."""
    rng = random.Random(f"{seed}:{judge}")
    picks = []
    for entry in design["arrangement"]:
        pick = davidson_draw(
            rng, strengths[entry["left"]] + left_bias, strengths[entry["right"]], nu
        )
        picks.append(
            {
                "trial": entry["trial"],
                "judge": judge,
                "judge_kind": "bot",
                "pick": pick,
                "reason": f"chose {pick}",
            }
        )
    return picks


STRENGTHS = {"alpha": 1.2, "beta": 0.4, "gamma": -0.4, "delta": -1.2}


def candidate_run(
    root: Path,
    *,
    names: Sequence[str] = ("alpha", "beta", "gamma", "delta"),
    prompts: int = 30,
    mode: str = "all",
    strengths: Mapping[str, float] | None = None,
    judges: Sequence[str] = ("bot:strength",),
    left_bias: float = 0.0,
    nu: float = 0.5,
    name: str = "run",
    seed: str = SEED,
) -> Path:
    """A whole several-candidate run judged by seeded strength bots (one picks file each; the
    first is picks.jsonl, the others picks-JUDGE.jsonl)."""
    design = candidate_design(names, prompts, mode, seed=seed)
    run_dir = write_candidate_run(root, design, name=name)
    truth = dict(STRENGTHS if strengths is None else strengths)
    loaded = artifacts.load_design(run_dir).design
    for n, judge in enumerate(judges):
        records = strength_picks(loaded, truth, judge=judge, seed=n, nu=nu, left_bias=left_bias)
        file = artifacts.PICKS if n == 0 else f"picks-{judge.replace(':', '-')}.jsonl"
        write_picks(run_dir / file, records)
    return run_dir
