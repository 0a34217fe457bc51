"""Generate tests/data/pair_pd_reference.py: pair-mode pd = |2 Pc - 1| with its 95% interval.

Independent of the code under test (imports neither blindtest nor scipy):

- Clopper-Pearson bounds of Pc at 95%: roots of the regularized incomplete beta,
  ``I_p(k, n - k + 1) = 0.025`` (lower) and ``I_p(k + 1, n - k) = 0.975`` (upper), found by
  ``mpmath.findroot`` (pegasus) at ``mp.dps = 50``; 0 at k = 0 and 1 at k = n.
- pd's interval is the image of that interval under ``p -> |2p - 1|``, taken from the
  definition: the image of [lo, hi] holds 0 when 1/2 is in it, and its largest value is at an
  end.
- The two-sided exact p at 1/2 (R's binom.test rule, ties within a relative 1e-7) is an exact
  integer sum over Fractions.

Command (from the repository root; about 10 seconds):

    .venv/bin/python tests/data/generate_pair_pd_reference.py && .venv/bin/ruff format tests/data
"""

from __future__ import annotations

import datetime
import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath

NS = (1, 2, 3, 4, 5, 8, 10, 12, 15, 20, 23, 30, 40, 50, 100)
OUT = Path(__file__).with_name("pair_pd_reference.py")


def cp_bounds(k: int, n: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    tail = mpmath.mpf("0.025")

    def root(a: int, b: int, target: mpmath.mpf) -> mpmath.mpf:
        return mpmath.findroot(
            lambda x: mpmath.betainc(a, b, 0, x, regularized=True) - target,
            (mpmath.mpf(0), mpmath.mpf(1)),
            solver="pegasus",
        )

    lo = mpmath.mpf(0) if k == 0 else root(k, n - k + 1, tail)
    hi = mpmath.mpf(1) if k == n else root(k + 1, n - k, 1 - tail)
    return lo, hi


def folded_image(lo: mpmath.mpf, hi: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    ends = (abs(2 * lo - 1), abs(2 * hi - 1))
    low = mpmath.mpf(0) if lo <= mpmath.mpf("0.5") <= hi else min(ends)
    return low, max(ends)


def two_sided_half(k: int, n: int) -> Fraction:
    observed = math.comb(n, k)
    kept = sum(
        math.comb(n, i) for i in range(n + 1) if math.comb(n, i) * 10**7 <= observed * (10**7 + 1)
    )
    return min(Fraction(1), Fraction(kept, 2**n))


def main() -> None:
    mpmath.mp.dps = 50
    rows = []
    for n in NS:
        for k in range(n + 1):
            lo, hi = cp_bounds(k, n)
            pd_lo, pd_hi = folded_image(lo, hi)
            estimate = abs(2 * mpmath.mpf(k) / n - 1)
            p = two_sided_half(k, n)
            values = (estimate, pd_lo, pd_hi, mpmath.mpf(p.numerator) / p.denominator)
            rows.append(f"    ({n}, {k}, " + ", ".join(mpmath.nstr(v, 20) for v in values) + "),")
    header = f'''"""Reference pair pd = |2 Pc - 1| and its 95% interval (folded Clopper-Pearson).

Used by tests/stats/test_stats_pair.py and tests/analysis/test_pair_pd.py.

Generated reference table -- do not edit; regenerate with:

    .venv/bin/python tests/data/generate_pair_pd_reference.py && .venv/bin/ruff format tests/data

Tool: mpmath {mpmath.__version__} (mp.dps = 50) and exact rational arithmetic
(Python {sys.version.split()[0]} fractions); date {datetime.date.today().isoformat()}.
Provenance: tests/data/README.md. File: tests/data/pair_pd_reference.py.
"""

from __future__ import annotations

# (n, k, pd estimate, pd lo, pd hi, two-sided exact p at 1/2) at 95%
PAIR_PD = (
'''
    OUT.write_text(header + "\n".join(rows) + "\n)\n")


if __name__ == "__main__":
    main()
