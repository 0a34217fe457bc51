"""Who meets whom when a design has k candidates (k = 2..20): the pairing schedule.

Pure: no I/O, no click. Every random choice comes from `blindtest.model.rng.DesignRng` with the
design seed and a ``pairing:`` label, so anyone holding the seed re-derives the schedule.

Modes (``--pairs``):

* ``all``: every pair of candidates on every prompt (``k(k-1)/2`` comparisons per prompt).
* ``reference:NAME``: every other candidate against NAME on every prompt (``k-1`` per prompt).
* ``sample:M``: M distinct pairs per prompt (``1 <= M <= k(k-1)/2``).

Derivation (schedule version ``blindtest/pairing@1``):

1. The pool is the list of pairs the mode allows, each written ``(i, j)`` with ``i < j`` in
   the order the candidates were given, listed in lexicographic order; ``M`` is the number of
   pairs per prompt (the pool's size for ``all`` and ``reference``).
2. The number of comparisons is ``prompts x M``, or ``trials`` when that is smaller: a cap
   uses the first prompts in full and the last one in part, as the two-sided ``--trials``
   uses the first prompts (the designer has already shuffled them).
3. The comparisons are dealt from rounds. A round is the whole pool in a seeded order
   (``DesignRng(seed, "pairing:rounds")``): the candidates' indices are shuffled, the pool is
   cut into the rounds of the circle method (round-robin: each is a perfect matching, or one
   candidate sits out when k is odd) restricted to the pool, those matchings are shuffled, and
   so are the pairs within each. Rounds are laid end to end and read M at a time, prompt by
   prompt. Where a prompt's M pairs straddle two rounds, the next round's opening pairs that
   repeat a pair already dealt to that prompt are moved, in order, to just after the
   prompt's share, so a prompt never holds a pair twice. Every pair therefore meets
   ``floor(n / s)`` or ``ceil(n / s)`` times in ``n`` comparisons over a pool of ``s``.
4. Sides. A pair met ``c`` times is shown ``floor(c / 2)`` times each way, and the odd one
   (when ``c`` is odd) in the direction an Euler tour gives: the pairs with an odd count form
   a graph; a dummy vertex joined to every vertex of odd degree makes every degree even;
   Hierholzer's walk (from the vertices in ``DesignRng(seed, "pairing:sides")`` order, edges
   taken in that order too) orients each edge along the tour. Every candidate is then on the
   left within one of as often as on the right, overall and within each pair. Which of a
   pair's meetings get which direction is a seeded shuffle (same stream, pairs in pool order).
5. The order the comparisons are shown in is a seeded shuffle of the whole list
   (``DesignRng(seed, "pairing:order")``).

A candidate answers each prompt once, and that answer serves every comparison of that prompt
it appears in: the answers to generate are the union of (prompt, candidate) over comparisons.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from blindtest.errors import BadValue, option
from blindtest.model.rng import DesignRng

__all__ = [
    "MAX_CANDIDATES",
    "PAIRING_VERSION",
    "Comparison",
    "PairingMode",
    "ScheduleSize",
    "parse_mode",
    "schedule",
    "schedule_size",
]

PAIRING_VERSION = "blindtest/pairing@1"
MIN_CANDIDATES = 2
MAX_CANDIDATES = 20


@dataclass(frozen=True, slots=True)
class PairingMode:
    """A parsed ``--pairs`` value: ``kind`` is "all", "reference" or "sample"."""

    kind: str
    reference: str | None = None
    per_prompt: int | None = None

    def __str__(self) -> str:
        if self.kind == "reference":
            return f"reference:{self.reference}"
        if self.kind == "sample":
            return f"sample:{self.per_prompt}"
        return self.kind


@dataclass(frozen=True, slots=True)
class Comparison:
    """One comparison: candidate ``left`` and candidate ``right`` answering prompt ``prompt``
    (an index into the design's prompt list, from 0)."""

    prompt: int
    left: str
    right: str


@dataclass(frozen=True, slots=True)
class ScheduleSize:
    """What a schedule costs: ``comparisons`` judged, ``answers`` generated (distinct
    (prompt, candidate)), ``prompts`` used, and the answers each candidate gives."""

    comparisons: int
    answers: int
    prompts: int
    answers_per_candidate: tuple[tuple[str, int], ...]


def parse_mode(text: str) -> PairingMode:
    """``all``, ``reference:NAME`` or ``sample:M`` (M a positive integer)."""
    value = text.strip()
    if value == "all":
        return PairingMode("all")
    kind, sep, rest = value.partition(":")
    if sep and kind == "reference" and rest:
        return PairingMode("reference", reference=rest)
    if sep and kind == "sample":
        if not rest.isdigit() or int(rest) < 1:
            raise BadValue(f"{option('pairs', text)}: M in sample:M must be a whole number >= 1")
        return PairingMode("sample", per_prompt=int(rest))
    raise BadValue(f"{option('pairs', text)}: give all, reference:NAME or sample:M")


def _check_candidates(candidates: Sequence[str]) -> list[str]:
    names = list(candidates)
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"candidate names must be non-empty text, got {name!r}")
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"candidate {name!r} is named twice; names must be distinct")
        seen.add(name)
    if not MIN_CANDIDATES <= len(names) <= MAX_CANDIDATES:
        raise ValueError(
            f"{len(names)} candidates: a design takes {MIN_CANDIDATES} to {MAX_CANDIDATES}"
        )
    return names


def _pool(names: list[str], mode: PairingMode) -> tuple[list[tuple[int, int]], int]:
    k = len(names)
    every = [(i, j) for i in range(k) for j in range(i + 1, k)]
    if mode.kind == "all":
        return every, len(every)
    if mode.kind == "reference":
        if mode.reference not in names:
            raise BadValue(
                f"{option('pairs', f'reference:{mode.reference}')}: no candidate of that name "
                f"(candidates: {', '.join(names)})"
            )
        r = names.index(mode.reference)
        return [(i, j) for i, j in every if r in (i, j)], k - 1
    if mode.kind == "sample":
        m = mode.per_prompt
        if m is None or not 1 <= m <= len(every):
            raise BadValue(
                f"{option('pairs', f'sample:{m}')}: {k} candidates make {len(every)} pairs, "
                f"so M must be 1 to {len(every)}"
            )
        return every, m
    raise ValueError(f"unknown pairing mode {mode.kind!r}")  # pragma: no cover


@functools.lru_cache(maxsize=32)
def _circle_rounds(k: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """The round-robin (circle method) rounds over positions 0..k-1: every pair once."""
    size = k if k % 2 == 0 else k + 1  # position k is a bye when k is odd
    ring = list(range(size))
    rounds: list[tuple[tuple[int, int], ...]] = []
    for _ in range(size - 1):
        matching = []
        for a in range(size // 2):
            x, y = ring[a], ring[size - 1 - a]
            if x < k and y < k:
                matching.append((min(x, y), max(x, y)))
        rounds.append(tuple(matching))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return tuple(rounds)


def _round(k: int, pool: set[tuple[int, int]], rng: DesignRng) -> list[tuple[int, int]]:
    label = list(range(k))
    rng.shuffle(label)
    matchings = []
    for matching in _circle_rounds(k):
        pairs = []
        for x, y in matching:
            a, b = label[x], label[y]
            pair = (min(a, b), max(a, b))
            if pair in pool:
                pairs.append(pair)
        if pairs:
            rng.shuffle(pairs)
            matchings.append(pairs)
    rng.shuffle(matchings)
    return [pair for matching in matchings for pair in matching]


def _deal(
    k: int, pool: list[tuple[int, int]], per_prompt: int, total: int, rng: DesignRng
) -> list[list[tuple[int, int]]]:
    """``total`` pairs dealt ``per_prompt`` to a prompt, from seeded rounds of the pool."""
    pool_set = set(pool)
    prompts: list[list[tuple[int, int]]] = []
    if per_prompt == len(pool):
        # Every prompt holds the whole pool: only a prompt the cap cuts short needs a round.
        whole, part = divmod(total, per_prompt)
        prompts = [list(pool) for _ in range(whole)]
        if part:
            prompts.append(_round(k, pool_set, rng)[:part])
        return prompts
    current: list[tuple[int, int]] = []
    dealt = 0
    while dealt < total:
        upcoming = _round(k, pool_set, rng)
        if current:
            # This round opens inside a prompt: move any pair that prompt already holds to
            # just after its share (the round still holds every pair of the pool once).
            need = per_prompt - len(current)
            held = set(current)
            fresh = [p for p in upcoming if p not in held]
            opening = fresh[:need]
            chosen = set(opening)
            upcoming = opening + [p for p in upcoming if p not in chosen]
        for pair in upcoming:
            if dealt == total:
                break
            current.append(pair)
            dealt += 1
            if len(current) == per_prompt:
                prompts.append(current)
                current = []
    if current:
        prompts.append(current)
    return prompts


def _euler_orient(
    k: int, edges: list[tuple[int, int]], order: list[int]
) -> dict[tuple[int, int], tuple[int, int]]:
    """Orient ``edges`` (distinct pairs) so every vertex's out- and in-degree differ by at
    most one; returns pair -> (from, to)."""
    dummy = k
    adjacency: dict[int, list[tuple[int, int]]] = {v: [] for v in range(k + 1)}
    all_edges: list[tuple[int, int]] = list(edges)
    degree = [0] * (k + 1)
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    all_edges += [(v, dummy) for v in order if degree[v] % 2]
    rank = {v: n for n, v in enumerate(order)}
    rank[dummy] = k
    for index, (a, b) in enumerate(sorted(all_edges, key=lambda e: (rank[e[0]], rank[e[1]]))):
        adjacency[a].append((b, index))
        adjacency[b].append((a, index))
    used = [False] * len(all_edges)
    directed: dict[tuple[int, int], tuple[int, int]] = {}
    pointer = [0] * (k + 1)
    for start in [*order, dummy]:
        stack = [start]
        while stack:  # Hierholzer's walk; each edge is oriented as it is first walked
            v = stack[-1]
            while pointer[v] < len(adjacency[v]) and used[adjacency[v][pointer[v]][1]]:
                pointer[v] += 1
            if pointer[v] == len(adjacency[v]):
                stack.pop()
                continue
            w, index = adjacency[v][pointer[v]]
            used[index] = True
            if v != dummy and w != dummy:
                directed[(min(v, w), max(v, w))] = (v, w)
            stack.append(w)
    return directed


def schedule(
    candidates: Sequence[str],
    prompts: int,
    mode: PairingMode | str,
    seed: str,
    *,
    trials: int | None = None,
) -> tuple[Comparison, ...]:
    """The comparisons of a k-candidate design, in the order they are shown (module doc).

    Raises ValueError (one line, for the CLI to print with exit 2) for fewer than 2 or more
    than 20 candidates, a name given twice, an unknown reference, M out of range, fewer than
    one prompt, or a cap below 1.
    """
    names = _check_candidates(candidates)
    parsed = parse_mode(mode) if isinstance(mode, str) else mode
    if isinstance(prompts, bool) or not isinstance(prompts, int) or prompts < 1:
        raise ValueError(f"prompts must be a whole number >= 1, got {prompts!r}")
    if trials is not None and (isinstance(trials, bool) or not isinstance(trials, int)):
        raise BadValue(f"{option('trials')} must be a whole number >= 1, got {trials!r}")
    if trials is not None and trials < 1:
        raise BadValue(f"{option('trials', trials)}: give at least 1")
    k = len(names)
    pool, per_prompt = _pool(names, parsed)
    total = prompts * per_prompt if trials is None else min(trials, prompts * per_prompt)
    dealt = _deal(k, pool, per_prompt, total, DesignRng(seed, "pairing:rounds"))

    counts: dict[tuple[int, int], int] = dict.fromkeys(pool, 0)
    for pairs in dealt:
        for pair in pairs:
            counts[pair] += 1
    sides_rng = DesignRng(seed, "pairing:sides")
    order = list(range(k))
    sides_rng.shuffle(order)
    odd = [pair for pair in pool if counts[pair] % 2]
    extra = _euler_orient(k, odd, order)
    directions: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for pair in pool:
        i, j = pair
        half = counts[pair] // 2
        row = [(i, j)] * half + [(j, i)] * half
        if counts[pair] % 2:
            row.append(extra[pair])
        sides_rng.shuffle(row)
        directions[pair] = row
    taken = dict.fromkeys(pool, 0)
    out: list[Comparison] = []
    for prompt, pairs in enumerate(dealt):
        for pair in pairs:
            left, right = directions[pair][taken[pair]]
            taken[pair] += 1
            out.append(Comparison(prompt, names[left], names[right]))
    DesignRng(seed, "pairing:order").shuffle(out)
    return tuple(out)


def schedule_size(
    comparisons: Sequence[Comparison], candidates: Sequence[str] | None = None
) -> ScheduleSize:
    """Comparisons, answers to generate (distinct (prompt, candidate)) and prompts used, for
    bt-design to print before anything is sent. ``candidates`` orders the per-candidate
    counts (default: first appearance)."""
    answers: set[tuple[int, str]] = set()
    used: set[int] = set()
    for comparison in comparisons:
        answers.add((comparison.prompt, comparison.left))
        answers.add((comparison.prompt, comparison.right))
        used.add(comparison.prompt)
    per: dict[str, int] = dict.fromkeys(candidates or (), 0)
    for _, name in sorted(answers):
        per[name] = per.get(name, 0) + 1
    return ScheduleSize(
        comparisons=len(comparisons),
        answers=len(answers),
        prompts=len(used),
        answers_per_candidate=tuple(per.items()),
    )
