"""The analysis behind bt-analyze, split by job (see ``blindtest.analysis.api``, the stage's entry
point): per-protocol analyses, tells, wording, the pure ``build_report`` and the one loader."""
