"""Cost: the pre-run estimate per role and the ``--price-ROLE`` prices."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from blindtest.errors import BadInput, option
from blindtest.generation.requests import prompt_texts, system_prompt
from blindtest.model.candidates import TWO_SIDES, candidates_of, has_side_options
from blindtest.model.normalize import count_words
from blindtest.model.slots import LAUNDER, iter_slots
from blindtest.rundir.types import DesignRecord

#: Assumed output length for a cost estimate when the design sets no token limit.
ASSUMED_OUTPUT_TOKENS = 600


def _cost(price: tuple[float, float], tokens_in: float, tokens_out: float) -> float:
    """Dollars, for prices in dollars per million tokens (in, out)."""
    return (tokens_in * price[0] + tokens_out * price[1]) / 1e6


def estimate_cost(
    design: DesignRecord, prices: Mapping[str, tuple[float, float]]
) -> dict[str, dict[str, float]]:
    """A rough pre-run estimate per role: input tokens ~ words x 4/3 of system + prompt;
    output tokens = the design's token limit, or ``ASSUMED_OUTPUT_TOKENS`` without one. Per
    slot to fetch: with candidates, per answer (each prompt once per candidate), however many
    comparisons show it."""
    prompt_text = prompt_texts(design)
    system_words = {
        side: count_words(system_prompt(design, side) or "") for side in candidates_of(design)
    }
    estimate: dict[str, dict[str, float]] = {}
    imported = design["source"]["kind"] == "dirs"
    prompt_words: dict[str, int] = {}  # a prompt is asked in every slot of its trial
    for slot in iter_slots(design):
        roles = [] if imported else [slot.side]
        roles += [LAUNDER] if design["normalization"]["launder"] else []
        for role in roles:
            params = design["models"][slot.side].get("params", {})
            output = params.get("max_tokens") or ASSUMED_OUTPUT_TOKENS
            if role == LAUNDER:
                words_in = output * 0.75 + 80
            else:
                words = prompt_words.get(slot.prompt_id)
                if words is None:
                    words = prompt_words[slot.prompt_id] = count_words(prompt_text(slot.prompt_id))
                words_in = system_words[slot.side] + words
            entry = estimate.setdefault(role, {"input_tokens": 0.0, "output_tokens": 0.0})
            entry["input_tokens"] += words_in * 4 / 3
            entry["output_tokens"] += output
    for role, entry in estimate.items():
        if role in prices:
            entry["cost"] = _cost(prices[role], entry["input_tokens"], entry["output_tokens"])
    return estimate


def named_prices(items: Sequence[str]) -> dict[str, str]:
    """``--price NAME=IN,OUT`` (once per candidate) -> ``{NAME: "IN,OUT"}``."""
    found: dict[str, str] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise BadInput(
                f"{option('prices', item)}: expected NAME=IN,OUT (a candidate's name and its "
                f"dollars per million tokens), e.g. {option(_price_of('alpha'), '2.5,10')}"
            )
        if name in found:
            raise BadInput(
                f"{option(_price_of(name))}: given twice; give each candidate's price once"
            )
        found[name] = text
    return found


def _price_of(role: str) -> str:
    """The option a role's price is given in: ``prices['A']`` (bt-generate's ``--price-a``),
    ``prices['fast']`` (``--price fast=IN,OUT``)."""
    return f"prices[{role!r}]"


def check_price_roles(design: DesignRecord, prices: Mapping[str, object]) -> None:
    """Refuse a price for a role the design does not have: ``--price-a`` for a design of
    candidates, ``--price NAME`` for a two-sided design or a name it does not hold."""
    roles = candidates_of(design)
    unknown = [role for role in prices if role != LAUNDER and role not in roles]
    if not unknown:
        return
    if not has_side_options(design):
        if unknown[0] in TWO_SIDES:
            raise BadInput(
                f"{option(_price_of(unknown[0]))}: this design has candidates "
                f"({', '.join(roles)}), not sides A and B; price each with "
                f"{option(_price_of('NAME'), 'IN,OUT')}"
            )
        raise BadInput(
            f"{option(_price_of(unknown[0]))}: this design has no candidate of that name "
            f"(candidates: {', '.join(roles)})"
        )
    raise BadInput(
        f"{option(_price_of(unknown[0]))}: this design has sides A and B, not candidates; "
        f"price them with {option(_price_of('A'))} and {option(_price_of('B'))}"
    )


def parse_prices(texts: Mapping[str, str | None]) -> dict[str, tuple[float, float]]:
    """``{role: "IN,OUT"}`` as given to ``--price-ROLE`` -> dollars per million tokens, in
    and out; refuses anything but two finite numbers >= 0."""
    prices = {}
    for role, text in texts.items():
        if text is None:
            continue
        try:
            parts = [float(p) for p in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
            if role not in (*TWO_SIDES, LAUNDER):  # a candidate's --price NAME=IN,OUT
                raise BadInput(
                    f"{option(_price_of(role), text)}: expected IN,OUT dollars per million "
                    "tokens (two finite numbers >= 0), e.g. 2.5,10"
                )
            raise BadInput(
                f"{option(_price_of(role))}: expected IN,OUT dollars per million tokens "
                f"(two finite numbers >= 0), e.g. 2.5,10; got {text!r}"
            )
        prices[role] = (parts[0], parts[1])
    return prices
