"""Do not edit; regenerate with tests/data/make_controls_reference.py.
Tool: Python 3.11.7 fractions.Fraction + math.comb (exact
hypergeometric enumeration, no scipy); generated 2026-12-03.
(real non-tie, real n, control non-tie, control n, one-sided p: real above controls)
"""

FISHER_GREATER = [
    (20, 20, 8, 8, 1.0),  # exactly 1
    (20, 20, 0, 8, 3.217394521742348e-07),  # exactly 1/3108105
    (15, 20, 3, 10, 0.02416484065659478),  # exactly 3143/130065
    (15, 20, 8, 10, 0.7715296198054818),  # exactly 4363/5655
    (17, 20, 2, 6, 0.027759197324414717),  # exactly 83/2990
    (10, 10, 0, 5, 0.000333000333000333),  # exactly 1/3003
    (10, 10, 5, 5, 1.0),  # exactly 1
    (8, 10, 1, 6, 0.024475524475524476),  # exactly 7/286
    (30, 40, 12, 20, 0.1844100993348606),  # exactly 27206506237/147532626115
    (0, 12, 0, 7, 1.0),  # exactly 1
    (12, 12, 0, 12, 3.698011505253395e-07),  # exactly 1/2704156
    (25, 50, 20, 20, 1.0),  # exactly 1
    (45, 60, 6, 15, 0.012648146005799424),  # exactly 1229238421/97187241548
    (5, 5, 4, 5, 0.5),  # exactly 1/2
    (33, 100, 2, 30, 0.002421542532205285),  # exactly 18401654670092651211/7599145761579651891040
]
