"""Exact statistics for blindtest: pure functions returning frozen result dataclasses.

No I/O anywhere in this package. Tests, intervals and conversions delegate to scipy where it
has the function; what is ours is the triangle pd and Thurstonian d', the similarity and power
calculations, the sequential e-process, agreement labels and the judge-panel analyses.
Non-finite floats are written as null by every ``to_dict()`` (see `intervals`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blindtest.stats.agreement import (
        AGREEMENT_CAVEAT,
        ALPHA_RESAMPLES,
        AlphaResult,
        KappaResult,
        KappaTestResult,
        PercentAgreementResult,
        PositionBiasResult,
        cohen_kappa,
        fleiss_kappa,
        kappa_label,
        kappa_with_se,
        krippendorff_alpha,
        percent_agreement,
        position_bias,
    )
    from blindtest.stats.binomial import (
        BinomialResult,
        McNemarResult,
        binomial_p_value,
        binomial_test,
        lower_tail,
        mcnemar_exact,
        upper_tail,
    )
    from blindtest.stats.controls import (
        MIN_COMPARISONS,
        NonTieComparisonResult,
        compare_non_tie,
    )
    from blindtest.stats.intervals import (
        Interval,
        clopper_pearson,
        json_float,
        proportion_interval,
        wilson,
    )
    from blindtest.stats.judges import (
        BetaBinomialResult,
        JudgePanelResult,
        RandomizationResult,
        beta_binomial,
        judge_panel,
        randomization_test,
    )
    from blindtest.stats.multiple import bonferroni, holm
    from blindtest.stats.pair import (
        PairResult,
        pair_dprime_from_pc,
        pair_pc_from_dprime,
        pair_pd,
        pair_test,
    )
    from blindtest.stats.power import (
        PowerRow,
        RejectionRegion,
        SimilarityPowerRow,
        critical_value,
        power_row,
        power_table,
        rejection_region,
        similarity_power_row,
        similarity_smallest_n,
        smallest_n,
    )
    from blindtest.stats.preference import MIN_MARGIN, PreferenceResult, preference_test
    from blindtest.stats.sequential import (
        CrossingResult,
        SequentialResult,
        crossing_boundary,
        crossing_distribution,
        e_process,
        log_e_value,
        log_e_values,
        simulate_crossings,
    )
    from blindtest.stats.similarity import SimilarityResult, pc_at_pd, similarity_test
    from blindtest.stats.tables import FisherResult, fisher_exact
    from blindtest.stats.triangle import (
        TRIANGLE_GUESS,
        TriangleResult,
        dprime_from_pc,
        pc_from_dprime,
        pc_from_pd,
        pd_from_pc,
        triangle_test,
    )

#: Where each public name lives: the submodules load on first use, so importing one light
#: module (``bt-plan`` needs binomial tails only) does not load scipy.stats (start-up).
_HOME = {
    "AGREEMENT_CAVEAT": "blindtest.stats.agreement",
    "ALPHA_RESAMPLES": "blindtest.stats.agreement",
    "AlphaResult": "blindtest.stats.agreement",
    "KappaTestResult": "blindtest.stats.agreement",
    "kappa_with_se": "blindtest.stats.agreement",
    "krippendorff_alpha": "blindtest.stats.agreement",
    "KappaResult": "blindtest.stats.agreement",
    "PercentAgreementResult": "blindtest.stats.agreement",
    "PositionBiasResult": "blindtest.stats.agreement",
    "cohen_kappa": "blindtest.stats.agreement",
    "fleiss_kappa": "blindtest.stats.agreement",
    "kappa_label": "blindtest.stats.agreement",
    "percent_agreement": "blindtest.stats.agreement",
    "position_bias": "blindtest.stats.agreement",
    "BinomialResult": "blindtest.stats.binomial",
    "McNemarResult": "blindtest.stats.binomial",
    "binomial_p_value": "blindtest.stats.binomial",
    "binomial_test": "blindtest.stats.binomial",
    "lower_tail": "blindtest.stats.binomial",
    "mcnemar_exact": "blindtest.stats.binomial",
    "upper_tail": "blindtest.stats.binomial",
    "MIN_COMPARISONS": "blindtest.stats.controls",
    "NonTieComparisonResult": "blindtest.stats.controls",
    "compare_non_tie": "blindtest.stats.controls",
    "Interval": "blindtest.stats.intervals",
    "clopper_pearson": "blindtest.stats.intervals",
    "json_float": "blindtest.stats.intervals",
    "proportion_interval": "blindtest.stats.intervals",
    "wilson": "blindtest.stats.intervals",
    "BetaBinomialResult": "blindtest.stats.judges",
    "JudgePanelResult": "blindtest.stats.judges",
    "RandomizationResult": "blindtest.stats.judges",
    "beta_binomial": "blindtest.stats.judges",
    "judge_panel": "blindtest.stats.judges",
    "randomization_test": "blindtest.stats.judges",
    "bonferroni": "blindtest.stats.multiple",
    "holm": "blindtest.stats.multiple",
    "PairResult": "blindtest.stats.pair",
    "pair_dprime_from_pc": "blindtest.stats.pair",
    "pair_pc_from_dprime": "blindtest.stats.pair",
    "pair_pd": "blindtest.stats.pair",
    "pair_test": "blindtest.stats.pair",
    "PowerRow": "blindtest.stats.power",
    "RejectionRegion": "blindtest.stats.power",
    "SimilarityPowerRow": "blindtest.stats.power",
    "critical_value": "blindtest.stats.power",
    "power_row": "blindtest.stats.power",
    "power_table": "blindtest.stats.power",
    "rejection_region": "blindtest.stats.power",
    "similarity_power_row": "blindtest.stats.power",
    "similarity_smallest_n": "blindtest.stats.power",
    "smallest_n": "blindtest.stats.power",
    "MIN_MARGIN": "blindtest.stats.preference",
    "PreferenceResult": "blindtest.stats.preference",
    "preference_test": "blindtest.stats.preference",
    "CrossingResult": "blindtest.stats.sequential",
    "SequentialResult": "blindtest.stats.sequential",
    "crossing_boundary": "blindtest.stats.sequential",
    "crossing_distribution": "blindtest.stats.sequential",
    "e_process": "blindtest.stats.sequential",
    "log_e_value": "blindtest.stats.sequential",
    "log_e_values": "blindtest.stats.sequential",
    "simulate_crossings": "blindtest.stats.sequential",
    "SimilarityResult": "blindtest.stats.similarity",
    "pc_at_pd": "blindtest.stats.similarity",
    "similarity_test": "blindtest.stats.similarity",
    "FisherResult": "blindtest.stats.tables",
    "fisher_exact": "blindtest.stats.tables",
    "TRIANGLE_GUESS": "blindtest.stats.triangle",
    "TriangleResult": "blindtest.stats.triangle",
    "dprime_from_pc": "blindtest.stats.triangle",
    "pc_from_dprime": "blindtest.stats.triangle",
    "pc_from_pd": "blindtest.stats.triangle",
    "pd_from_pc": "blindtest.stats.triangle",
    "triangle_test": "blindtest.stats.triangle",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'blindtest.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "AGREEMENT_CAVEAT",
    "ALPHA_RESAMPLES",
    "MIN_COMPARISONS",
    "MIN_MARGIN",
    "TRIANGLE_GUESS",
    "AlphaResult",
    "BetaBinomialResult",
    "BinomialResult",
    "CrossingResult",
    "FisherResult",
    "Interval",
    "JudgePanelResult",
    "KappaResult",
    "KappaTestResult",
    "McNemarResult",
    "NonTieComparisonResult",
    "PairResult",
    "PercentAgreementResult",
    "PositionBiasResult",
    "PowerRow",
    "PreferenceResult",
    "RandomizationResult",
    "RejectionRegion",
    "SequentialResult",
    "SimilarityPowerRow",
    "SimilarityResult",
    "TriangleResult",
    "beta_binomial",
    "binomial_p_value",
    "binomial_test",
    "bonferroni",
    "clopper_pearson",
    "cohen_kappa",
    "compare_non_tie",
    "critical_value",
    "crossing_boundary",
    "crossing_distribution",
    "dprime_from_pc",
    "e_process",
    "fisher_exact",
    "fleiss_kappa",
    "holm",
    "json_float",
    "judge_panel",
    "kappa_label",
    "kappa_with_se",
    "krippendorff_alpha",
    "log_e_value",
    "log_e_values",
    "lower_tail",
    "mcnemar_exact",
    "pair_dprime_from_pc",
    "pair_pc_from_dprime",
    "pair_pd",
    "pair_test",
    "pc_at_pd",
    "pc_from_dprime",
    "pc_from_pd",
    "pd_from_pc",
    "percent_agreement",
    "position_bias",
    "power_row",
    "power_table",
    "preference_test",
    "proportion_interval",
    "randomization_test",
    "rejection_region",
    "similarity_power_row",
    "similarity_smallest_n",
    "similarity_test",
    "simulate_crossings",
    "smallest_n",
    "triangle_test",
    "upper_tail",
    "wilson",
]
