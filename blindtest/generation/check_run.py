"""``bt-generate RUN --check``: what to check for a design (each side, and the launderer when
the design launders), read from RUN without writing anything to it (no lock, no file)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from blindtest.errors import BadInput
from blindtest.generation.cost import ASSUMED_OUTPUT_TOKENS, check_price_roles, estimate_cost
from blindtest.generation.requests import endpoints_for, messages_for, prompt_texts
from blindtest.generation.summary import recorded_prices
from blindtest.model.candidates import candidates_of, has_side_options, role_words
from blindtest.model.derived import trial_slot_seed
from blindtest.model.normalize import launder_messages
from blindtest.model.prompt_size import estimated_tokens
from blindtest.model.slots import LAUNDER
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord
from blindtest.transport.preflight import CHECK_PROMPT, Target

__all__ = ["design_targets", "run_targets"]


def _words(messages: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(str(m["content"]) for m in messages)


def _longest(design: DesignRecord, side: str) -> tuple[int, str]:
    """Estimated tokens of the longest request ``side`` is sent (system prompt, earlier turns
    and the prompt through the side's template), over the prompts its trials use; and that
    prompt's id."""
    text = prompt_texts(design)
    used = dict.fromkeys(str(entry["prompt_id"]) for entry in design["arrangement"])
    sizes = (
        (estimated_tokens(_words(messages_for(design, text(pid), side, pid))), pid) for pid in used
    )
    return max(sizes, default=(0, ""), key=lambda size: size[0])


def price_option(design: DesignRecord, role: str) -> str:
    """The option that prices a role: ``--price-a``, ``--price-launder``, or for a candidate
    ``--price NAME=IN,OUT``."""
    if not has_side_options(design) and role != LAUNDER:
        return f"--price {role}="
    return f"--price-{role.lower()}"


def design_targets(
    design: DesignRecord,
    prices: Mapping[str, tuple[float, float]],
    header_env: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> list[Target]:
    """One target per endpoint the design asks (none for answers read from files)."""
    estimate = estimate_cost(design, prices)
    targets = []
    for role, endpoint in endpoints_for(design).items():
        endpoint = replace(endpoint, header_env=(header_env or {}).get(role, ()))
        if role == LAUNDER:
            caps = [
                design["models"][side].get("params", {}).get("max_tokens")
                for side in candidates_of(design)
            ]
            longest_answer = max(cap or ASSUMED_OUTPUT_TOKENS for cap in caps)
            messages: Any = launder_messages(CHECK_PROMPT)
            longest = estimated_tokens(_words(launder_messages(""))) + longest_answer
            longest_id = ""
            title, out, seed = f"launderer: {endpoint.model} at {endpoint.origin}", None, None
        else:
            messages = messages_for(design, CHECK_PROMPT, role)
            longest, longest_id = _longest(design, role)
            title = f"{role_words(design, role)}: {endpoint.model} at {endpoint.origin}"
            out = design["models"][role].get("params", {}).get("max_tokens")
            seed = trial_slot_seed(design, 1, 1)
        targets.append(
            Target(
                role=role,
                title=title,
                endpoint=endpoint,
                messages=messages,
                longest_tokens=longest,
                output_tokens=out,
                estimate=estimate.get(role),
                price_option=price_option(design, role),
                seed=seed,
                longest_name=f"prompt {longest_id}" if longest_id else "answer to launder",
            )
        )
    return targets


def run_targets(
    run: Path,
    given: Mapping[str, tuple[float, float]],
    header_env: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> list[Target]:
    """The targets of RUN's design (checked against its hash), priced by ``given`` and the
    prices an earlier session recorded. Reads only."""
    loaded = artifacts.load_design(run)
    previous = None
    path = run / artifacts.GENERATION
    if path.exists():
        previous = artifacts.read_json(path, "generation")
    check_price_roles(loaded.design, given)
    if not has_side_options(loaded.design):
        named = next((side for side, items in (header_env or {}).items() if items), None)
        if named is not None:
            raise BadInput(
                f"--{named.lower()}-header-env: this design has candidates "
                f"({', '.join(candidates_of(loaded.design))}), not sides A and B"
            )
    prices = recorded_prices(previous, loaded.sha256) | dict(given)
    return design_targets(loaded.design, prices, header_env)
