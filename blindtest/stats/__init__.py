"""Exact statistics for blindtest: pure functions returning frozen result dataclasses.

No I/O anywhere in this package. Tests, intervals and conversions delegate to scipy where it
has the function; what is ours is the triangle pd and Thurstonian d', the similarity and power
calculations, the sequential e-process, agreement labels and the judge-panel analyses.
Non-finite floats are written as null by every ``to_dict()`` (see `intervals`).
"""

from __future__ import annotations

from blindtest.stats.agreement import (
    AGREEMENT_CAVEAT,
    KappaResult,
    PercentAgreementResult,
    PositionBiasResult,
    cohen_kappa,
    fleiss_kappa,
    kappa_label,
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
from blindtest.stats.triangle import (
    TRIANGLE_GUESS,
    TriangleResult,
    dprime_from_pc,
    pc_from_dprime,
    pc_from_pd,
    pd_from_pc,
    triangle_test,
)

__all__ = [
    "AGREEMENT_CAVEAT",
    "MIN_MARGIN",
    "TRIANGLE_GUESS",
    "BetaBinomialResult",
    "BinomialResult",
    "CrossingResult",
    "Interval",
    "JudgePanelResult",
    "KappaResult",
    "McNemarResult",
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
    "critical_value",
    "crossing_boundary",
    "crossing_distribution",
    "dprime_from_pc",
    "e_process",
    "fleiss_kappa",
    "holm",
    "json_float",
    "judge_panel",
    "kappa_label",
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
