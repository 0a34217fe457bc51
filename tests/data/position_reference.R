# Reference values for the position gate's clustered left share (blindtest.stats.position),
# from R's survey package (not from blindtest).
#
# Do not edit position_reference_r.json; regenerate from the repository root with
#     Rscript tests/data/position_reference.R > tests/data/position_reference_r.json
# Made with R 4.2.2 Patched (2022-11-10 r83330), survey 4.1.1 and jsonlite, 2026-12-05.
#
# Each case is a list of comparisons (left, right untied picks). The picks are expanded to one
# row per pick with the comparison as the cluster and weight 1/n_i, so that svymean gives the
# mean over comparisons of each comparison's left share and its linearisation variance
# (which carries the factor N/(N-1)). The interval is Korn and Graubard's as the package states
# it in svyciprop(method = "beta") (`svyciprop_beta`, kept for the record) and as blindtest
# states it (`kg`): the variance without the N/(N-1) factor, the design effect floored at 1,
# n_eff = N (unscaled) when the share is 0 or 1, else the same degrees-of-freedom factor
# (qt(a/2, n - 1) / qt(a/2, N - 1))^2.
suppressPackageStartupMessages({library(survey); library(jsonlite)})

cases <- list(
  list(name = "one judge", left = c(rep(1, 13), rep(0, 7)), right = c(rep(0, 13), rep(1, 7))),
  list(name = "panel of 3, no ties", left = c(3, 3, 2, 0, 1, 3, 2, 2, 0, 3, 1, 3),
       right = c(0, 0, 1, 3, 2, 0, 1, 1, 3, 0, 2, 0)),
  list(name = "panel of 5 with ties", left = c(5, 4, 0, 1, 2, 3, 5, 0, 2, 4, 1, 3, 5, 2),
       right = c(0, 0, 4, 3, 2, 1, 0, 5, 3, 1, 2, 1, 0, 3)),
  list(name = "swap, one judge", left = c(1, 1, 2, 1, 0, 1, 1, 2, 1, 1, 1, 0, 1, 1, 2, 1),
       right = c(1, 1, 0, 1, 2, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 1)),
  list(name = "panel of 2, leaning", left = c(2, 2, 1, 2, 2, 0, 2, 1, 2, 2, 2, 1, 2, 0, 2, 2,
       2, 1, 2, 2), right = c(0, 0, 1, 0, 0, 2, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0, 0, 1, 0, 0)),
  list(name = "panel of 4, many comparisons", left = rep(c(4, 0, 2, 3, 1, 4, 0, 2), 30),
       right = rep(c(0, 4, 2, 1, 3, 0, 3, 1), 30)),
  list(name = "panel of 5, every pick left", left = c(5, 5, 4, 5), right = c(0, 0, 0, 0))
)

kg <- function(left, right, level) {
  n <- left + right
  keep <- n > 0
  left <- left[keep]; n <- n[keep]
  N <- length(n); picks <- sum(n)
  rows <- data.frame(
    cluster = rep(seq_len(N), n),
    y = unlist(mapply(function(l, m) c(rep(1, l), rep(0, m - l)), left, n, SIMPLIFY = FALSE)),
    w = rep(1 / n, n)
  )
  design <- svydesign(ids = ~cluster, weights = ~w, data = rows)
  m <- svymean(~y, design)
  est <- unname(coef(m)[1]); v_r <- unname(vcov(m)[1, 1])
  a <- 1 - level
  kept <- list(estimate = est, variance_r = v_r)
  if (N > 1 && est > 0 && est < 1 && v_r > 0) {
    b <- svyciprop(~y, design, method = "beta", level = level)
    kept$svyciprop_beta <- unname(as.numeric(attr(b, "ci")))
  }
  v <- v_r * (N - 1) / N
  if (est <= 0 || est >= 1) {
    ne <- N; deff <- NULL
  } else {
    deff <- v / (est * (1 - est) / picks)
    ne <- if (deff <= 1) picks else est * (1 - est) / v
  }
  if (picks != N && !is.null(deff)) ne <- ne * (qt(a / 2, picks - 1) / qt(a / 2, N - 1))^2
  lo <- if (est <= 0) 0 else qbeta(a / 2, ne * est, ne * (1 - est) + 1)
  hi <- if (est >= 1) 1 else qbeta(1 - a / 2, ne * est + 1, ne * (1 - est))
  c(kept, list(effective_n = ne, design_effect = deff, lo = lo, hi = hi))
}

out <- lapply(cases, function(case) {
  list(name = case$name, left = case$left, right = case$right,
       level_95 = kg(case$left, case$right, 0.95), level_90 = kg(case$left, case$right, 0.90))
})
cat(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE, null = "null"), "\n")
