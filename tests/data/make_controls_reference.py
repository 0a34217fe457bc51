"""Regenerate tests/data/controls_fisher_reference.py: one-sided Fisher exact p-values for the
hidden controls' comparison (real trials' non-tie rate above the controls'), by exact
enumeration of the hypergeometric distribution in rational arithmetic (fractions.Fraction,
math.comb), independent of scipy.

    .venv/bin/python tests/data/make_controls_reference.py > tests/data/controls_fisher_reference.py

Table [[a, b], [c, d]] = [[real non-tie, real ties], [control non-tie, control ties]]. With the
margins fixed, a ~ Hypergeometric: P(a = x) = C(a+c, x) C(b+d, r1-x) / C(n, r1), r1 = a+b.
The "greater" alternative's p is P(a >= observed).
"""

from __future__ import annotations

import datetime
import platform
from fractions import Fraction
from math import comb

CASES = [
    # (real non-tie, real n, control non-tie, control n)
    (20, 20, 8, 8),
    (20, 20, 0, 8),
    (15, 20, 3, 10),
    (15, 20, 8, 10),
    (17, 20, 2, 6),
    (10, 10, 0, 5),
    (10, 10, 5, 5),
    (8, 10, 1, 6),
    (30, 40, 12, 20),
    (0, 12, 0, 7),
    (12, 12, 0, 12),
    (25, 50, 20, 20),
    (45, 60, 6, 15),
    (5, 5, 4, 5),
    (33, 100, 2, 30),
]


def fisher_greater(a: int, real_n: int, c: int, control_n: int) -> Fraction:
    b = real_n - a  # the table's other cells follow from the margins
    n, r1, c1 = real_n + control_n, a + b, a + c
    total = comb(n, r1)
    upper = min(r1, c1)
    return sum(
        (Fraction(comb(c1, x) * comb(n - c1, r1 - x), total) for x in range(a, upper + 1)),
        Fraction(0),
    )


def main() -> None:
    today = datetime.date.today().isoformat()
    print('"""Do not edit; regenerate with tests/data/make_controls_reference.py.')
    print(f"Tool: Python {platform.python_version()} fractions.Fraction + math.comb (exact")
    print(f"hypergeometric enumeration, no scipy); generated {today}.")
    print("(real non-tie, real n, control non-tie, control n, one-sided p: real above controls)")
    print('"""')
    print()
    print("FISHER_GREATER = [")
    for a, rn, c, cn in CASES:
        p = fisher_greater(a, rn, c, cn)
        print(f"    ({a}, {rn}, {c}, {cn}, {float(p)!r}),  # exactly {p}")
    print("]")


if __name__ == "__main__":
    main()
