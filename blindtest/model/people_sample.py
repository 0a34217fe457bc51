"""Which prompts people judge when an LLM judge judges every comparison (``bt-design
--people-sample N``): the sample drawn from the design seed, recorded in the hashed design,
re-derived by bt-verify, and read by the judging stage (people are asked only those
comparisons) and the analysis (the prediction-powered estimate, `blindtest.stats.ppi`).

The prompt is the sampling unit: every comparison of a sampled prompt goes to people (two
sides: one comparison per prompt). Derivation (``blindtest/people-sample@1``), from the
prompts the arrangement uses, in the prompt file's order:

* uniform (``by: "uniform"``): their indices shuffled by ``DesignRng(seed, "people_sample")``
  (Fisher-Yates, ``blindtest/rng@1``); the first N are the sample, in that order (the draw
  order, which the estimate's cross-fitted weight reads);
* stratified by tag (``by: "tag"``): a prompt's stratum is its first tag (``""`` when it has
  none); each stratum gets ``min(2, its prompts)``, and the rest of N is shared in proportion
  to the prompts each stratum has left, by largest remainder (ties to the stratum first in
  sorted order); each stratum's prompts (file order) are shuffled by ``DesignRng(seed,
  "people_sample:" + stratum)`` and its share taken from the front. The sample lists the
  strata in sorted order, each in its draw order.

The record (``design["people_sample"]``): ``version``, ``size``, ``by``, ``judge_prediction``
(``"verdict"``: the LLM judge's prediction is its verdict's score; ``"confidence"``: a fixed
mapping of its confidence, :func:`predicted_score`), ``missing`` (``"void"`` or ``"bound"``:
what a sampled comparison left without a people's judgement does to the estimate,
`blindtest.stats.ppi.ppi_preference_missing`) and ``prompts`` (the sample's prompt ids in
draw order). Pure: no I/O, no click.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from blindtest.errors import BadValue, option
from blindtest.model.rng import DesignRng

__all__ = [
    "BY",
    "JUDGE_PREDICTIONS",
    "MISSING_RULES",
    "PEOPLE_ESTIMAND",
    "PEOPLE_SAMPLE_VERSION",
    "allocate",
    "draw_people_sample",
    "people_pool",
    "people_sample_words",
    "people_trials",
    "predicted_score",
    "sample_of",
    "sampled_prompts",
    "stratum_of",
    "used_prompts",
]

PEOPLE_SAMPLE_VERSION = "blindtest/people-sample@1"
#: The estimand of a decision pre-registered with a people's sample (``bt-design
#: --people-sample N --decide RULE``): the people's mean score for the challenger (a win 1, a
#: tie 1/2, a loss 0), estimated by prediction-powered inference
#: (`blindtest.analysis.people_estimate`).
PEOPLE_ESTIMAND = "people-mean-score"
#: How the sample is drawn: every prompt alike, or within each tag.
BY = ("uniform", "tag")
#: What the LLM judge's prediction of a comparison is.
JUDGE_PREDICTIONS = ("verdict", "confidence")
#: What a sampled comparison without a people's judgement does to the estimate.
MISSING_RULES = ("void", "bound")
#: The stream of a uniform draw; a stratum's is this, a colon, and its name.
STREAM = "people_sample"
#: The least a stratum gets (or all its prompts): a variance needs two judgements.
MIN_PER_STRATUM = 2


def stratum_of(prompt: Mapping[str, Any]) -> str:
    """A prompt's stratum: its first tag, ``""`` when it has none."""
    tags = prompt.get("tags") or []
    return str(tags[0]) if tags else ""


def used_prompts(design: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The prompts the arrangement uses, in the prompt file's order."""
    used = {str(entry["prompt_id"]) for entry in design["arrangement"]}
    return [p for p in design["prompts"] if str(p["id"]) in used]


def allocate(size: int, sizes: Sequence[int]) -> list[int]:
    """How many of ``size`` each stratum of ``sizes`` prompts gets (module doc)."""
    base = [min(MIN_PER_STRATUM, s) for s in sizes]
    rest = size - sum(base)
    if rest < 0:
        raise BadValue(
            f"{option('people_sample', size)}: a sample stratified by tag needs "
            f"{MIN_PER_STRATUM} prompts of each of the {len(sizes)} tags, {sum(base)} in all; "
            f"raise {option('people_sample')} or drop {option('people_sample_by')}"
        )
    room = [s - b for s, b in zip(sizes, base, strict=True)]
    total = sum(room)
    if rest > total:
        raise BadValue(f"{option('people_sample', size)}: more than the {sum(sizes)} prompts")
    quotas = [Fraction(rest * r, total) if total else Fraction(0) for r in room]
    shares = [int(q) for q in quotas]
    left = rest - sum(shares)
    order = sorted(range(len(sizes)), key=lambda i: (-(quotas[i] - shares[i]), i))
    for i in order[:left]:
        shares[i] += 1
    return [b + s for b, s in zip(base, shares, strict=True)]


def draw_people_sample(
    seed: str,
    prompts: Sequence[Mapping[str, Any]],
    size: int,
    by: str = "uniform",
    *,
    judge_prediction: str = "verdict",
    missing: str = "void",
) -> dict[str, Any]:
    """The design's ``people_sample`` record: ``size`` of ``prompts`` (the prompts the
    arrangement uses, file order) drawn as the module doc says. ``BadValue`` naming the
    option for a size or rule it cannot take."""
    if by not in BY:
        raise BadValue(f"{option('people_sample_by', by)}: use tag, or leave it out")
    if judge_prediction not in JUDGE_PREDICTIONS:
        raise BadValue(f"{option('judge_prediction', judge_prediction)}: use verdict or confidence")
    if missing not in MISSING_RULES:
        raise BadValue(f"{option('people_missing', missing)}: use void or bound")
    if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size < len(prompts):
        raise BadValue(
            f"{option('people_sample', size)}: give 2 to {len(prompts) - 1} (fewer than the "
            f"{len(prompts)} prompts the design uses: the LLM judge alone judges the rest)"
        )
    ids = [str(p["id"]) for p in prompts]
    if by == "uniform":
        order = list(range(len(ids)))
        DesignRng(seed, STREAM).shuffle(order)
        chosen = [ids[i] for i in order[:size]]
    else:
        names = sorted({stratum_of(p) for p in prompts})
        members = {name: [str(p["id"]) for p in prompts if stratum_of(p) == name] for name in names}
        shares = allocate(size, [len(members[name]) for name in names])
        chosen = []
        for name, share in zip(names, shares, strict=True):
            own = list(members[name])
            DesignRng(seed, f"{STREAM}:{name}").shuffle(own)
            chosen += own[:share]
    return {
        "version": PEOPLE_SAMPLE_VERSION,
        "size": size,
        "by": by,
        "judge_prediction": judge_prediction,
        "missing": missing,
        "prompts": chosen,
    }


def sample_of(design: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The design's people sample record, or None (people judge every comparison)."""
    record = design.get("people_sample")
    return record if isinstance(record, Mapping) else None


def sampled_prompts(design: Mapping[str, Any]) -> tuple[str, ...]:
    """The sampled prompts' ids in draw order (empty without a sample)."""
    record = sample_of(design)
    return tuple(str(p) for p in record["prompts"]) if record is not None else ()


def people_trials(design: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The comparisons people judge (every comparison of a sampled prompt), in trial order;
    None when the design has no people sample."""
    if sample_of(design) is None:
        return None
    chosen = set(sampled_prompts(design))
    return tuple(
        sorted(int(e["trial"]) for e in design["arrangement"] if str(e["prompt_id"]) in chosen)
    )


def people_pool(design: Mapping[str, Any]) -> tuple[int, ...]:
    """The trials a person (or a panel) is asked: the people sample's, else every trial."""
    sampled = people_trials(design)
    if sampled is not None:
        return sampled
    return tuple(sorted(int(e["trial"]) for e in design["arrangement"]))


def predicted_score(score: float | None, confidence: float | None, rule: str) -> float:
    """An LLM judge's prediction of a comparison's score (for the first candidate of its
    pair: win 1, tie 1/2, loss 0), fixed before any person's judgement is seen.

    ``"verdict"``: the verdict's score. ``"confidence"``: the confidence ``c`` the judge stated
    read as its probability that its verdict is right, ``1/2 + (score - 1/2)(2c - 1)``: a win
    said with confidence 0.8 predicts 0.8, a loss 0.2, a tie 1/2 whatever the confidence (no
    confidence stated: the verdict's score). No verdict (the judge left the comparison out,
    or never answered it): 1/2. Any fixed rule keeps the estimate unbiased; a better one only
    narrows it."""
    if score is None:
        return 0.5
    if rule == "confidence" and confidence is not None:
        sure = min(max(float(confidence), 0.0), 1.0)
        return 0.5 + (score - 0.5) * (2.0 * sure - 1.0)
    return float(score)


def people_sample_words(design: Mapping[str, Any]) -> str:
    """What the design asks of people and of the LLM judge, in one sentence ("" without a
    sample)."""
    record = sample_of(design)
    if record is None:
        return ""
    trials = people_trials(design) or ()
    prompts = len(used_prompts(design))
    how = "within each prompt's first tag" if record["by"] == "tag" else "uniformly"
    comparisons = f" ({len(trials)} comparisons)" if len(trials) != record["size"] else ""
    return (
        f"people's sample: people judge {record['size']} of the {prompts} prompts"
        f"{comparisons}, drawn {how} from the seed; an LLM judge judges every comparison, and "
        "the report estimates what people prefer"
    )
