"""Reference p-values for the extra questions' tests by exact enumeration in rationals.

Do not edit answers_reference.json; regenerate from the repository root with
    python tests/data/answers_reference.py > tests/data/answers_reference.json
Made with Python 3.11.7 integers and fractions (no scipy, no blindtest), 2026-12-03.

- mcnemar: b discordant pairs one way, c the other; under H0 b ~ Binomial(b + c, 1/2); the
  two-sided p sums the probabilities of every outcome no more likely than b (R's rule, with its
  relative tolerance 1 + 1e-7, applied exactly).
- fisher: the table [[a, b], [c, d]]; with both margins fixed, a is hypergeometric; the
  two-sided p sums the probabilities of every table no more likely than the observed one (the
  same rule).
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

TOLERANCE = 1 + Fraction(1, 10**7)


def mcnemar(b: int, c: int) -> Fraction:
    n = b + c
    pmf = [Fraction(comb(n, k), 2**n) for k in range(n + 1)]
    return min(Fraction(1), sum((p for p in pmf if p <= pmf[b] * TOLERANCE), Fraction(0)))


def fisher(a: int, b: int, c: int, d: int) -> Fraction:
    row, col, n = a + b, a + c, a + b + c + d
    total = comb(n, col)
    low, high = max(0, col - (c + d)), min(row, col)
    pmf = {x: Fraction(comb(row, x) * comb(n - row, col - x), total) for x in range(low, high + 1)}
    return min(Fraction(1), sum((p for p in pmf.values() if p <= pmf[a] * TOLERANCE), Fraction(0)))


def main() -> None:
    pairs = [(b, c) for c in range(26) for b in range(26) if b + c]
    pairs += [(40, 60), (100, 130), (7, 1), (250, 301), (0, 40), (1, 60)]
    tables = [(a, b, c, d) for d in range(7) for c in range(7) for b in range(7) for a in range(7)]
    tables += [
        (12, 5, 3, 10), (30, 10, 15, 25), (3, 14, 9, 2), (50, 45, 38, 60),
        (0, 17, 25, 0), (20, 1, 2, 30), (9, 9, 9, 10),
    ]  # fmt: skip
    print(
        json.dumps(
            {
                "tool": "Python 3.11.7 fractions, exact enumeration",
                "generated": "2026-12-03",
                "mcnemar": [{"b": b, "c": c, "p": float(mcnemar(b, c))} for b, c in pairs],
                "fisher": [
                    {"a": a, "b": b, "c": c, "d": d, "p": float(fisher(a, b, c, d))}
                    for a, b, c, d in tables
                ],
            }
        )
    )


if __name__ == "__main__":
    main()
