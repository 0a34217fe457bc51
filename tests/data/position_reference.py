"""Exact sign-flip p-values for the position gate, by enumerating every placement (not from
blindtest).

Do not edit position_reference.json; regenerate from the repository root with
    python3 tests/data/position_reference.py > tests/data/position_reference.json
Made with Python 3.11 (fractions, itertools; no blindtest import), 2026-12-05.

Each comparison i has left[i] and right[i] untied picks; its left share s_i = left / (left +
right). Under no position effect each comparison's placement mirrors with probability 1/2,
turning s_i - 1/2 into its negative, independently across comparisons. p is the share of the
2^N sign patterns whose |sum of signed |s_i - 1/2|| reaches the observed |sum (s_i - 1/2)|,
in exact rational arithmetic.
"""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction


def exact_p(left: list[int], right: list[int]) -> Fraction:
    d = [Fraction(a, a + b) - Fraction(1, 2) for a, b in zip(left, right, strict=True) if a + b]
    observed = abs(sum(d, Fraction(0)))
    sizes = [abs(x) for x in d]
    hits = sum(
        abs(sum((s * x for s, x in zip(signs, sizes, strict=True)), Fraction(0))) >= observed
        for signs in itertools.product((1, -1), repeat=len(sizes))
    )
    return Fraction(hits, 2 ** len(sizes))


def main() -> None:
    rng = random.Random(20261205)
    cases = [
        ("one judge 13 of 20", [1] * 13 + [0] * 7, [0] * 13 + [1] * 7),
        ("swap, both first 3, both second 0", [2, 2, 2, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1]),
        ("all consistent", [1, 1, 1, 1], [1, 1, 1, 1]),
    ]
    for judges, ties, n in ((3, 0.0, 12), (5, 0.3, 14), (2, 0.2, 16), (4, 0.0, 15), (2, 0.0, 10)):
        for passes in (1, 2):
            left: list[int] = []
            right: list[int] = []
            lean = rng.choice((0.5, 0.6, 0.75))
            for _ in range(n):
                a = b = 0
                for _ in range(judges * passes):
                    if rng.random() < ties:
                        continue
                    if rng.random() < lean:
                        a += 1
                    else:
                        b += 1
                left.append(a)
                right.append(b)
            cases.append((f"{judges} judges x {passes} passes, ties {ties}", left, right))
    out = []
    for name, left, right in cases:
        p = exact_p(left, right)
        out.append({"name": name, "left": left, "right": right, "p": float(p), "p_exact": str(p)})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
