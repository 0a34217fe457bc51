"""Generate the reference tables for tests/test_stats_*.py, independently of blindtest.

Run from the repository root:

    .venv/bin/python tests/data/generate_stats_reference.py

It writes tests/data/{binomial,triangle,power,sequential}_reference.py. It never imports
blindtest: every value comes from exact rational arithmetic (Python integers and fractions) or
from mpmath at mp.dps = 50, by formulas written out here from their definitions:

* binomial tails at p = 1/3, 1/2 and rational alternatives: exact sums of C(n, j) p^j q^(n-j);
* R's two-sided binom.test p: exact sum of the probabilities <= pmf(k) * (1 + 1e-7);
* Clopper-Pearson bounds: roots of the binomial tail = a/2, by mpmath.findroot on 50-digit sums;
* Wilson bounds: the closed form with z = sqrt(2) erfinv(level), in mpmath;
* triangle Pc(d'): the noncentral-F identity Pc = P(F(1, 1, 2 d'^2 / 3) > 3) (David and
  Trivedi, 1962) summed as a Poisson mixture of incomplete betas, a different formula from the
  Ennis integral the library uses; checked against mpmath quadrature of the Ennis integral;
* e-values: the closed form E(n, k) = sum_{j<=k} C(n+1, j) 2^(k-j) / ((n+1) C(n, k)) in
  integers, checked against mpmath quadrature of the mixture integral; crossing boundaries by
  exact integer comparison and crossing probabilities by exact dynamic programming in fractions.

The scipy import is used only for starting points of the root finders, never for a value.
"""

from __future__ import annotations

import datetime
import math
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import cache
from pathlib import Path

import mpmath as mp
from scipy import stats as _start_points

mp.mp.dps = 50
HERE = Path(__file__).resolve().parent
COMMAND = ".venv/bin/python tests/data/generate_stats_reference.py"
THIRD = Fraction(1, 3)
HALF = Fraction(1, 2)
R_TOLERANCE = Fraction(10_000_001, 10_000_000)  # R binom.test's relErr = 1 + 1e-7
TINY = mp.mpf("1e-290")  # values below this are left out (not normal doubles)


def num(x: object) -> str:
    """A float literal with 20 significant digits (parses to the nearest double)."""
    value = mp.mpf(x)
    if value == 0:
        return "0.0"
    if mp.isinf(value):
        return "math.inf"
    return str(mp.nstr(value, 20, min_fixed=-4, max_fixed=6, strip_zeros=False))


# --- exact binomial ---


@cache
def weights(n: int, p: Fraction) -> tuple[tuple[int, ...], int]:
    """Integer weights w_j with pmf(j) = w_j / D for X ~ Bin(n, p), p = a/b rational."""
    a, b = p.numerator, p.denominator
    return tuple(math.comb(n, j) * a**j * (b - a) ** (n - j) for j in range(n + 1)), b**n


@cache
def suffix_sums(n: int, p: Fraction) -> tuple[int, ...]:
    w, _ = weights(n, p)
    out = [0] * (n + 2)
    for j in range(n, -1, -1):
        out[j] = out[j + 1] + w[j]
    return tuple(out)


def upper_tail(k: int, n: int, p: Fraction) -> Fraction:
    """P(X >= k) exactly."""
    if k <= 0:
        return Fraction(1)
    if k > n:
        return Fraction(0)
    return Fraction(suffix_sums(n, p)[k], weights(n, p)[1])


def lower_tail(k: int, n: int, p: Fraction) -> Fraction:
    """P(X <= k) exactly."""
    return 1 - upper_tail(k + 1, n, p)


def two_sided_r(k: int, n: int, p: Fraction) -> Fraction:
    """R binom.test two-sided p: sum of pmf(j) over j with pmf(j) <= pmf(k) (1 + 1e-7)."""
    w, total = weights(n, p)
    limit = w[k] * R_TOLERANCE
    return min(Fraction(1), Fraction(sum(x for x in w if x <= limit), total))


def to_mp(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


# --- mpmath binomial tails at irrational p (for Clopper-Pearson roots) ---


def tail_ge(n: int, k: int, p: mp.mpf) -> mp.mpf:
    """P(X >= k), X ~ Bin(n, p), by 50-digit summation of the pmf."""
    if k <= 0:
        return mp.mpf(1)
    q = 1 - p

    def pmf(j: int) -> mp.mpf:
        log = mp.loggamma(n + 1) - mp.loggamma(j + 1) - mp.loggamma(n - j + 1)
        return mp.exp(log + j * mp.log(p) + (n - j) * mp.log(q))

    mode = math.floor((n + 1) * p)
    if k > mode:
        total, term, j = mp.mpf(0), pmf(k), k
        while j <= n:
            total += term
            if term < total * mp.mpf("1e-60"):
                break
            term = term * (n - j) / (j + 1) * p / q
            j += 1
        return total
    total, term, j = mp.mpf(0), pmf(k - 1), k - 1
    while j >= 0:
        total += term
        if term < total * mp.mpf("1e-60"):
            break
        term = term * j / (n - j + 1) * q / p
        j -= 1
    return 1 - total


def solve(f: object, start: float) -> mp.mpf:
    """Root of the monotone f in (0, 1) near ``start``, by a bracketing solver."""
    x0 = mp.mpf(start)
    for width in ("1e-12", "1e-9", "1e-6", "1e-3", "1e-1"):
        lo = max(x0 * (1 - mp.mpf(width)), mp.mpf("1e-300"))
        hi = min(x0 * (1 + mp.mpf(width)), 1 - mp.mpf("1e-40"))
        if f(lo) * f(hi) <= 0:  # type: ignore[operator]
            return mp.findroot(f, (lo, hi), solver="anderson", tol=mp.mpf("1e-90"))
    raise AssertionError(f"no bracket near {start}")


def clopper_pearson(k: int, n: int, level: str) -> tuple[mp.mpf, mp.mpf]:
    tail = (1 - mp.mpf(level)) / 2
    lo, hi = mp.mpf(0), mp.mpf(1)
    if k > 0:
        start = float(_start_points.beta.ppf(float(tail), k, n - k + 1))
        lo = solve(lambda x: tail_ge(n, k, x) - tail, start)
        assert abs(tail_ge(n, k, lo) - tail) < mp.mpf("1e-40") * tail
    if k < n:
        start = float(_start_points.beta.ppf(1 - float(tail), k + 1, n - k))
        hi = solve(lambda x: (1 - tail_ge(n, k + 1, x)) - tail, start)
        assert abs((1 - tail_ge(n, k + 1, hi)) - tail) < mp.mpf("1e-40") * tail
    return lo, hi


def wilson(k: int, n: int, level: str) -> tuple[mp.mpf, mp.mpf]:
    z = mp.sqrt(2) * mp.erfinv(mp.mpf(level))
    p = mp.mpf(k) / n
    center = (2 * n * p + z**2) / (2 * (n + z**2))
    delta = z * mp.sqrt(4 * n * p * (1 - p) + z**2) / (2 * (n + z**2))
    lo = mp.mpf(0) if k == 0 else center - delta
    hi = mp.mpf(1) if k == n else center + delta
    return lo, hi


# --- triangle psychometric function ---


def pc_triangle(d: mp.mpf) -> mp.mpf:
    """P(F(1, 1, lambda = 2 d^2 / 3) > 3) as a Poisson(lambda / 2) mixture of beta tails."""
    half_lambda = d * d / 3
    total, j = mp.mpf(0), 0
    while True:
        weight = mp.exp(-half_lambda) * mp.power(half_lambda, j) / mp.factorial(j)
        # Given j, X1 / (X1 + X2) ~ Beta(1/2 + j, 1/2); F > 3 <=> that ratio > 3/4.
        tail = mp.betainc(mp.mpf(1) / 2, mp.mpf(1) / 2 + j, 0, mp.mpf(1) / 4, regularized=True)
        term = weight * tail
        total += term
        if j > half_lambda + 5 and term < mp.mpf("1e-60"):
            return total
        j += 1


def pc_triangle_ennis(d: mp.mpf) -> mp.mpf:
    """The Ennis integral, by mpmath quadrature (used only to check `pc_triangle`)."""
    s3, shift = mp.sqrt(3), d * mp.sqrt(mp.mpf(2) / 3)
    knee = shift / s3

    def f(z: mp.mpf) -> mp.mpf:
        return (mp.ncdf(-z * s3 + shift) + mp.ncdf(-z * s3 - shift)) * mp.npdf(z)

    return 2 * mp.quad(f, [0, knee, knee + 3, knee + 8, mp.inf])


def dprime_triangle(pc: mp.mpf) -> mp.mpf:
    if pc <= mp.mpf(1) / 3:
        return mp.mpf(0)
    if pc >= 1:
        return mp.inf
    lo, hi = mp.mpf(0), mp.mpf(1)
    while pc_triangle(hi) < pc:
        lo, hi = hi, 2 * hi
    for _ in range(40):  # bisection to a tight bracket, then polish with the secant method
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if pc_triangle(mid) < pc else (lo, mid)
    root = mp.findroot(lambda d: pc_triangle(d) - pc, (lo + hi) / 2, tol=mp.mpf("1e-80"))
    assert lo <= root <= hi
    return root


def pd_triangle(pc: mp.mpf) -> mp.mpf:
    return min(mp.mpf(1), max(mp.mpf(0), (3 * pc - 1) / 2))


# --- e-values ---


def e_value(n: int, k: int) -> Fraction:
    """E(n, k) = (3/2) int_{1/3}^1 p^k (1-p)^(n-k) dp / ((1/3)^k (2/3)^(n-k)), in closed form."""
    top = sum(math.comb(n + 1, j) * 2 ** (k - j) for j in range(k + 1))
    return Fraction(top, (n + 1) * math.comb(n, k))


def log_e_values(n: int, ks: Sequence[int]) -> dict[int, mp.mpf]:
    """log E(n, k) for each k in ks, with the numerator built up incrementally over k."""
    wanted, out = set(ks), {}
    top, choose_next, choose_n = 0, 1, 1  # C(n+1, k) and C(n, k) at the current k
    for k in range(max(ks) + 1):
        top = 2 * top + choose_next
        if k in wanted:
            out[k] = mp.log(top) - mp.log((n + 1) * choose_n)
        choose_next = choose_next * (n + 1 - k) // (k + 1)
        choose_n = choose_n * (n - k) // (k + 1)
    return out


def e_value_integral(n: int, k: int) -> mp.mpf:
    integral = mp.betainc(k + 1, n - k + 1, mp.mpf(1) / 3, 1)
    return mp.mpf(3) / 2 * integral * mp.mpf(3) ** k * (mp.mpf(3) / 2) ** (n - k)


def boundary(n: int, threshold: int) -> int | None:
    """Smallest k with E(n, k) >= threshold, by exact integer comparison."""
    top = 0
    for k in range(n + 1):
        top = 2 * top + math.comb(n + 1, k)  # sum_{j<=k} C(n+1, j) 2^(k-j)
        if top >= threshold * (n + 1) * math.comb(n, k):
            return k
    return None


def first_crossing(pc: Fraction, horizon: int, edges: Sequence[int | None]) -> list[Fraction]:
    """Exact P(first crossing at trial n), n = 1..horizon."""
    alive = {0: Fraction(1)}
    out = []
    for n in range(1, horizon + 1):
        moved: dict[int, Fraction] = {}
        for k, mass in alive.items():
            moved[k] = moved.get(k, Fraction(0)) + mass * (1 - pc)
            moved[k + 1] = moved.get(k + 1, Fraction(0)) + mass * pc
        edge = edges[n]
        crossed = sum((m for k, m in moved.items() if edge is not None and k >= edge), Fraction(0))
        out.append(crossed)
        alive = {k: m for k, m in moved.items() if edge is None or k < edge}
    return out


# --- grids ---

SMALL_N = range(1, 31)
LARGE_N = (35, 40, 50, 60, 75, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000)


def large_ks(n: int) -> list[int]:
    picks = {0, 1, 2, 3, n // 10, n // 4, n // 3 - 1, n // 3, n // 3 + 1, n // 3 + 2}
    picks |= {2 * n // 5, n // 2, 2 * n // 3, 3 * n // 4, n - 2, n - 1, n}
    return sorted(k for k in picks if 0 <= k <= n)


def grid(max_small: int = 30, large: Iterable[int] = LARGE_N) -> list[tuple[int, int]]:
    cases = [(n, k) for n in range(1, max_small + 1) for k in range(n + 1)]
    cases += [(n, k) for n in large for k in large_ks(n)]
    return cases


# --- writers ---


def header(name: str, description: str) -> str:
    today = datetime.date.today().isoformat()
    return (
        f'"""{description}\n\n'
        f"Generated reference table -- do not edit; regenerate with:\n\n"
        f"    {COMMAND}\n\n"
        f"Tool: mpmath {mp.__version__} (mp.dps = {mp.mp.dps}) and exact rational arithmetic\n"
        f"(Python {sys.version.split()[0]} fractions); date {today}.\n"
        f"Provenance: tests/data/README.md. File: tests/data/{name}.\n"
        f'"""\n\n'
        "from __future__ import annotations\n\n"
    )


def table(name: str, comment: str, rows: Iterable[Sequence[str]]) -> str:
    body = "".join(f"    ({', '.join(row)}),\n" for row in rows)
    return f"# {comment}\n{name} = (\n{body})\n\n"


def write(name: str, description: str, parts: list[str]) -> None:
    body = "".join(parts)
    text = header(name, description) + ("import math\n\n" if "math.inf" in body else "") + body
    (HERE / name).write_text(text.rstrip("\n") + "\n")
    print(f"wrote tests/data/{name}")


def opt(x: int | None) -> str:
    return "None" if x is None else str(x)


def binomial_tables() -> None:
    triangle_rows, two_sided_rows, third_rows = [], [], []
    for n, k in grid():
        p = to_mp(upper_tail(k, n, THIRD))
        if p > TINY:
            triangle_rows.append((str(n), str(k), num(p)))
        two = to_mp(two_sided_r(k, n, HALF))
        if two > TINY:
            two_sided_rows.append((str(n), str(k), num(two)))
    for n, k in grid(20, (50, 100, 300)):
        third = to_mp(two_sided_r(k, n, THIRD))
        if third > TINY:
            third_rows.append((str(n), str(k), num(third)))
    # spot check the exact sums against mpmath's incomplete beta
    for n, k in [(20, 9), (20, 14), (100, 40)]:
        via_beta = mp.betainc(k, n - k + 1, 0, mp.mpf(1) / 3, regularized=True)
        assert abs(via_beta - to_mp(upper_tail(k, n, THIRD))) < mp.mpf("1e-45")

    cp_rows, wilson_rows = [], []
    cp_cases = [(n, k, "0.95") for n, k in grid(20, (25, 30, 50, 100, 200, 1000, 10000))]
    cp_cases += [
        (n, k, level)
        for level in ("0.8", "0.9", "0.99", "0.999")
        for n in (1, 5, 20, 100, 1000)
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n})
    ]
    for n, k, level in cp_cases:
        lo, hi = clopper_pearson(k, n, level)
        cp_rows.append((str(n), str(k), level, num(lo), num(hi)))
    for n, k in grid():
        for level in ("0.95",) if n > 5 else ("0.8", "0.9", "0.95", "0.99"):
            lo, hi = wilson(k, n, level)
            wilson_rows.append((str(n), str(k), level, num(lo), num(hi)))
    print("binomial tables computed", flush=True)
    write(
        "binomial_reference.py",
        "Reference binomial p-values and proportion intervals.\n\n"
        "Used by tests/stats/test_stats_binomial.py, test_stats_intervals.py and "
        "test_stats_pair.py.",
        [
            table("TRIANGLE_P_VALUES", "(n, k, P(X >= k)) for X ~ Bin(n, 1/3)", triangle_rows),
            table("TWO_SIDED_HALF", "(n, k, R binom.test two-sided p) against 1/2", two_sided_rows),
            table("TWO_SIDED_THIRD", "(n, k, R binom.test two-sided p) against 1/3", third_rows),
            table("CLOPPER_PEARSON", "(n, k, level, lo, hi) two-sided exact interval", cp_rows),
            table("WILSON", "(n, k, level, lo, hi) Wilson score interval", wilson_rows),
        ],
    )


def triangle_tables() -> None:
    for d in ("0.3", "1", "2.5", "6"):
        check = pc_triangle_ennis(mp.mpf(d)) - pc_triangle(mp.mpf(d))
        assert abs(check) < mp.mpf("1e-30"), (d, check)
    assert abs(pc_triangle(mp.mpf(0)) - mp.mpf(1) / 3) < mp.mpf("1e-45")
    d_values: tuple[str, ...] = (
        "0.0001",
        "0.001",
        "0.01",
        "0.05",
        "0.1",
        "0.25",
        "0.5",
        "0.75",
        "1",
        "1.25",
    )
    d_values += ("1.5", "2", "2.5", "3", "3.5", "4", "5", "6", "7", "8", "10", "12")
    pc_rows = [(d, num(pc_triangle(mp.mpf(d)))) for d in d_values]
    pcs = [0.3334, 0.34, 0.35, 0.37, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8]
    pcs += [0.85, 0.9, 0.95, 0.97, 0.99, 0.995, 0.999, 0.9999, 0.99999]
    # mp.mpf(float) is the exact binary value the library receives.
    d_rows = [(repr(pc), num(dprime_triangle(mp.mpf(pc)))) for pc in pcs]
    case_rows = []
    cases = [(20, 9), (20, 14), (20, 20), (20, 0), (20, 7), (20, 11), (10, 5), (30, 15)]
    cases += [(1, 0), (1, 1), (2, 2), (5, 3), (12, 8), (50, 20), (50, 30), (100, 45), (200, 120)]
    for n, k in cases:
        p = to_mp(upper_tail(k, n, THIRD))
        lo, hi = clopper_pearson(k, n, "0.95")
        est = mp.mpf(k) / n
        case_rows.append(
            (
                str(n),
                str(k),
                num(p),
                num(lo),
                num(hi),
                num(pd_triangle(est)),
                num(pd_triangle(lo)),
                num(pd_triangle(hi)),
                num(dprime_triangle(est)),
                num(dprime_triangle(lo)),
                num(dprime_triangle(hi)),
            )
        )
    write(
        "triangle_reference.py",
        "Reference triangle psychometric function, d' and full triangle results.\n\n"
        "Used by tests/stats/test_stats_triangle.py.",
        [
            table("PC_FROM_DPRIME", "(d', Pc) by the noncentral-F identity", pc_rows),
            table("DPRIME_FROM_PC", "(Pc as a double, d')", d_rows),
            table(
                "TRIANGLE_CASES",
                "(n, k, p, pc_lo, pc_hi, pd, pd_lo, pd_hi, d', d'_lo, d'_hi), 95% Clopper-Pearson"
                "\n# (d' is math.inf where Pc = 1)",
                case_rows,
            ),
        ],
    )


def critical_upper(n: int, p0: Fraction, alpha: Fraction) -> int | None:
    for k in range(n + 1):
        if upper_tail(k, n, p0) <= alpha:
            return k
    return None


def two_tailed(n: int, lower: int | None, upper: int | None, p: Fraction) -> Fraction:
    """P(X <= lower or X >= upper) exactly (a missing tail contributes nothing)."""
    total = Fraction(0)
    if upper is not None:
        total += upper_tail(upper, n, p)
    if lower is not None:
        total += lower_tail(lower, n, p)
    return total


def power_tables() -> None:
    alpha05 = Fraction(1, 20)
    alternatives = (Fraction(1, 2), Fraction(3, 5), Fraction(7, 10), Fraction(4, 5))
    triangle_rows = []
    ns = [*range(1, 101), 120, 150, 200]
    for alpha in (alpha05, Fraction(1, 100)):
        for n in ns:
            c = critical_upper(n, THIRD, alpha)
            size = upper_tail(c, n, THIRD) if c is not None else Fraction(0)
            powers = [to_mp(upper_tail(c, n, p)) if c is not None else 0 for p in alternatives]
            triangle_rows.append(
                (str(float(alpha)), str(n), opt(c), num(to_mp(size)), *(num(x) for x in powers))
            )
    pair_rows = []
    for n in ns:
        hits = [k for k in range(n + 1) if two_sided_r(k, n, HALF) <= alpha05]
        upper = min((k for k in hits if 2 * k > n), default=None)
        lower = max((k for k in hits if 2 * k < n), default=None)
        pair_rows.append(
            (
                str(n),
                opt(lower),
                opt(upper),
                *(
                    num(to_mp(two_tailed(n, lower, upper, p)))
                    for p in (HALF, Fraction(3, 5), Fraction(7, 10), Fraction(4, 5))
                ),
            )
        )
    similarity_rows = []
    pd0 = Fraction(3, 10)
    pc0 = THIRD + 2 * pd0 / 3
    for n in [*range(1, 61), 80, 100, 150, 200, 300]:
        hi = max((k for k in range(n + 1) if lower_tail(k, n, pc0) <= alpha05), default=None)
        size = lower_tail(hi, n, pc0) if hi is not None else Fraction(0)
        powers = [
            lower_tail(hi, n, THIRD + 2 * pd / 3) if hi is not None else Fraction(0)
            for pd in (Fraction(0), Fraction(1, 10))
        ]
        similarity_rows.append(
            (str(n), opt(hi), *(num(to_mp(Fraction(x))) for x in (size, *powers)))
        )
    pair_similarity_rows = []
    pc_hi = HALF + pd0 / 2
    for n in (10, 20, 50, 80, 100, 150, 200, 300):
        ks = [
            k
            for k in range(n + 1)
            if lower_tail(k, n, pc_hi) <= alpha05 and upper_tail(k, n, 1 - pc_hi) <= alpha05
        ]
        if not ks:
            pair_similarity_rows.append((str(n), "None", "None", "0.0", "0.0"))
            continue
        lo, hi = ks[0], ks[-1]
        size = lower_tail(hi, n, pc_hi) - lower_tail(lo - 1, n, pc_hi)
        power = lower_tail(hi, n, HALF) - lower_tail(lo - 1, n, HALF)
        pair_similarity_rows.append((str(n), str(lo), str(hi), num(to_mp(size)), num(to_mp(power))))
    write(
        "power_reference.py",
        "Reference exact power tables.\n\nUsed by tests/stats/test_stats_power.py.",
        [
            table(
                "TRIANGLE_POWER",
                "(alpha, n, critical, achieved alpha, power at Pc = 0.5, 0.6, 0.7, 0.8)",
                triangle_rows,
            ),
            table(
                "PAIR_POWER",
                "(n, lower, upper, achieved alpha, power at 0.6, 0.7, 0.8); R two-sided p <= 0.05",
                pair_rows,
            ),
            table(
                "TRIANGLE_SIMILARITY_POWER",
                "(n, largest k declared similar, size at pd0 = 0.3, power at pd = 0, 0.1); "
                "alpha 0.05",
                similarity_rows,
            ),
            table(
                "PAIR_SIMILARITY_POWER",
                "(n, lo, hi, size at pd0 = 0.3, power at pd = 0); alpha 0.05, two one-sided tests",
                pair_similarity_rows,
            ),
        ],
    )


def sequential_tables() -> None:
    for n, k in [(0, 0), (1, 0), (1, 1), (10, 7), (25, 3), (30, 30)]:
        exact = to_mp(e_value(n, k))
        assert abs(e_value_integral(n, k) / exact - 1) < mp.mpf("1e-40"), (n, k)
    for n, k in [(0, 0), (7, 3), (30, 12)]:
        assert abs(log_e_values(n, [k])[k] - mp.log(to_mp(e_value(n, k)))) < mp.mpf("1e-45")
    cases: dict[int, list[int]] = {0: [0]}
    for n, k in grid():
        cases.setdefault(n, []).append(k)
    log_rows: list[tuple[str, ...]] = []
    for n, ks in cases.items():
        values = log_e_values(n, ks)
        log_rows.extend((str(n), str(k), num(values[k])) for k in ks)
    boundary_05 = [boundary(n, 20) for n in range(0, 301)]
    boundary_01 = [boundary(n, 100) for n in range(0, 201)]
    crossing_rows = []
    for alpha, edges in (("0.05", boundary_05), ("0.01", boundary_01)):
        for horizon in (20, 50, 100, 200):
            total = sum(first_crossing(THIRD, horizon, edges), Fraction(0))
            crossing_rows.append((alpha, str(horizon), num(to_mp(total))))
    stop_rows = []
    for pc in (Fraction(3, 5), Fraction(7, 10), Fraction(4, 5)):
        first = first_crossing(pc, 200, boundary_05)
        cumulative, median = Fraction(0), None
        for n, mass in enumerate(first, start=1):
            cumulative += mass
            if median is None and cumulative >= HALF:
                median = n
        stop_rows.append((str(float(pc)), opt(median), num(to_mp(cumulative))))
    null_first = first_crossing(THIRD, 200, boundary_05)
    write(
        "sequential_reference.py",
        "Reference e-values, crossing boundaries and exact crossing probabilities.\n\n"
        "Used by tests/stats/test_stats_sequential.py.",
        [
            table("LOG_E_VALUES", "(n, k, natural log of E(n, k))", log_rows),
            f"# smallest k with E(n, k) >= 20 for n = 0..300 (None: cannot cross)\n"
            f"BOUNDARY_ALPHA_05 = ({', '.join(opt(b) for b in boundary_05)},)\n\n",
            f"# smallest k with E(n, k) >= 100 for n = 0..200\n"
            f"BOUNDARY_ALPHA_01 = ({', '.join(opt(b) for b in boundary_01)},)\n\n",
            table(
                "NULL_CROSSING",
                "(alpha, horizon, exact P(ever crossing 1/alpha by the horizon)) at Pc = 1/3",
                crossing_rows,
            ),
            f"# exact P(first crossing at trial n), n = 1..200, at Pc = 1/3, alpha = 0.05\n"
            f"NULL_FIRST_CROSSING_05 = ({', '.join(num(to_mp(x)) for x in null_first)},)\n\n",
            table(
                "STOPPING",
                "(Pc, exact median stopping trial, P(crossing by 200)); alpha 0.05",
                stop_rows,
            ),
        ],
    )


def format_outputs() -> None:
    """Run ruff format over the tables so that a later `ruff format` leaves them unchanged."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    names = [str(HERE / name) for name in OUTPUTS]
    subprocess.run([ruff, "format", "--quiet", *names], check=True)


OUTPUTS = (
    "binomial_reference.py",
    "triangle_reference.py",
    "power_reference.py",
    "sequential_reference.py",
)


def main() -> None:
    binomial_tables()
    triangle_tables()
    power_tables()
    sequential_tables()
    format_outputs()


if __name__ == "__main__":
    main()
