"""Interval type, binomial proportion intervals, argument checks and the JSON convention.

This module owns the `Interval` shape written to report.json and the two proportion intervals
the rest of `blindtest.stats` uses (Clopper-Pearson, Wilson). It never does I/O.

JSON convention for non-finite numbers: `Interval.to_dict()` and every result's `to_dict()`
write an infinite or NaN float as ``null`` (schemas/common.schema.json: "a null bound means
unbounded"). The dataclasses keep the float (``math.inf``), so code reading results in memory
still sees the sign. In report.json a null ``lo`` means unbounded below, a null ``hi``
unbounded above, and a null ``estimate`` means infinite or undefined (triangle d' at Pc = 1 is
+inf; a win rate with no untied comparison is undefined).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "Interval",
    "IntervalMethod",
    "clopper_pearson",
    "json_float",
    "proportion_interval",
    "wilson",
]

IntervalMethod = Literal["clopper-pearson", "wilson"]
INTERVAL_METHODS: tuple[str, ...] = ("clopper-pearson", "wilson")


def json_float(value: float) -> float | None:
    """Return ``value`` as a plain float, or None when it is infinite or NaN (see module doc)."""
    value = float(value)
    return value if math.isfinite(value) else None


def to_plain(value: Any) -> Any:
    """Convert a result field to plain JSON-able values (floats via `json_float`)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        to_dict = getattr(value, "to_dict", None)
        return to_dict() if callable(to_dict) else result_to_dict(value)
    # numpy is looked up, not imported: a value cannot be numpy's bool unless numpy is loaded,
    # and bt-generate (which reaches this module through its guard) never loads it.
    numpy = sys.modules.get("numpy")
    if isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_)):
        return bool(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return json_float(float(value))
    if isinstance(value, Mapping):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return [to_plain(item) for item in value]
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")  # pragma: no cover


def result_to_dict(result: Any) -> dict[str, Any]:
    """Plain-dict view of a result dataclass: one key per field, in declaration order."""
    return {
        field.name: to_plain(getattr(result, field.name)) for field in dataclasses.fields(result)
    }


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a two-sided interval ``[lo, hi]``."""

    estimate: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, float | None]:
        """The report.json shape ``{"estimate", "lo", "hi"}``; non-finite values become None."""
        return {
            "estimate": json_float(self.estimate),
            "lo": json_float(self.lo),
            "hi": json_float(self.hi),
        }


# --- argument checks shared by the package (ValueError that echoes the value and the range) ---


def _check_int(name: str, value: object, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def _check_count(k_name: str, k: object, n_name: str, n: object, *, n_min: int = 1) -> None:
    """Check ``0 <= k <= n`` and ``n >= n_min`` for integer counts."""
    n_value = _check_int(n_name, n, n_min)
    k_value = _check_int(k_name, k, 0)
    if k_value > n_value:
        raise ValueError(f"{k_name} must be in [0, {n_name}] = [0, {n_value}], got {k_value}")


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    result = float(value)
    if math.isnan(result):
        raise ValueError(f"{name} must be a real number, got nan")
    return result


def _check_closed(name: str, value: object, lo: float = 0.0, hi: float = 1.0) -> float:
    """Check ``lo <= value <= hi``."""
    result = _check_real(name, value)
    if not lo <= result <= hi:
        raise ValueError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    return result


def _check_open(name: str, value: object, lo: float = 0.0, hi: float = 1.0) -> float:
    """Check ``lo < value < hi``."""
    result = _check_real(name, value)
    if not lo < result < hi:
        raise ValueError(f"{name} must be in ({lo:g}, {hi:g}), got {value!r}")
    return result


def _check_confidence(confidence_level: object) -> float:
    return _check_closed("confidence_level", confidence_level)


def _check_alpha(alpha: object) -> float:
    return _check_open("alpha", alpha)


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return value


# --- intervals ---


def clopper_pearson(k: int, n: int, *, confidence_level: float = 0.95) -> Interval:
    """Two-sided exact (Clopper and Pearson, 1934) interval for a binomial proportion.

    Bounds are beta quantiles: ``lo = B^-1(a/2; k, n-k+1)``, ``hi = B^-1(1-a/2; k+1, n-k)``
    with ``a = 1 - confidence_level`` (scipy.stats.beta.ppf and .isf). Each tail holds at most
    a/2.
    """
    from scipy import stats  # deferred: scipy.stats costs 0.5 s at start-up

    _check_count("k", k, "n", n)
    level = _check_confidence(confidence_level)
    estimate = k / n
    if level == 1.0:
        # Convention: 100% confidence is the whole parameter space.
        return Interval(estimate, 0.0, 1.0)
    # Convention: confidence 0 follows the definition (a = 1: the two beta medians); the exact
    # interval does not shrink to the point estimate.
    tail = (1.0 - level) / 2.0
    # k = 0 and k = n are the explicit branches of the definition: that side is the boundary.
    lo = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    # The upper quantile via isf, so that a tail near 0 is not lost in 1 - tail.
    hi = 1.0 if k == n else float(stats.beta.isf(tail, k + 1, n - k))
    return Interval(estimate, lo, hi)


def wilson(k: int, n: int, *, confidence_level: float = 0.95) -> Interval:
    """Wilson (1927) score interval without continuity correction (Newcombe, 1998, method 3).

    ``z = Phi^-1(1 - a/2)``. The lower bound is computed in the algebraically equal form
    ``2k^2 / (n (2k + z^2 + z sqrt(z^2 + 4k(n-k)/n)))``, which has no cancellation near 0.
    """
    _check_count("k", k, "n", n)
    level = _check_confidence(confidence_level)
    estimate = k / n
    if level == 1.0:
        # Convention: 100% confidence (z = infinity) is the whole parameter space.
        return Interval(estimate, 0.0, 1.0)
    # Convention: confidence 0 gives z = 0 and the formula returns the point estimate.
    # z from the tail itself: 0.5 + 0.5 * level would round to 1 for a level just below 1.
    from scipy import special  # deferred: scipy.special costs 0.3 s at start-up (scipy 1.17)

    z = -float(special.ndtri((1.0 - level) / 2.0))
    root = math.sqrt(z * z + 4.0 * k * (n - k) / n)
    # k = 0 (k = n) pins the lower (upper) bound to 0 (1) exactly, as the score test does.
    lo = 0.0 if k == 0 else 2.0 * k * k / (n * (2.0 * k + z * z + z * root))
    hi = 1.0 if k == n else (2.0 * k + z * z + z * root) / (2.0 * (n + z * z))
    return Interval(estimate, lo, hi)


def proportion_interval(
    k: int,
    n: int,
    *,
    confidence_level: float = 0.95,
    method: IntervalMethod = "clopper-pearson",
) -> Interval:
    """Two-sided interval for ``k`` successes in ``n`` trials, by ``method``."""
    _check_choice("method", method, INTERVAL_METHODS)
    if method == "wilson":
        return wilson(k, n, confidence_level=confidence_level)
    return clopper_pearson(k, n, confidence_level=confidence_level)
