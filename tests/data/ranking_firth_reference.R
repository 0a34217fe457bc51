# Reference values for the ranking's Firth fit (no ties) and for the separations, made outside
# blindtest and outside Python: run by ranking_firth_reference.py (which says how to
# regenerate); not run by tests.
#
#   Rscript tests/data/ranking_firth_reference.R IN.json OUT.json
#
# IN: {"firth": {name: {candidates, pairs: [[i, j, wins, losses, ties], ...]}},
#      "separations": {name: {k, alpha, pairs: [...]}}}
# For each Firth case (no ties): brglm2's brglmFit (type "AS_mean": Firth's penalised
# likelihood for the logit link) of cbind(wins, losses) on the Bradley-Terry design matrix
# (a column per candidate but the first, +1 for the pair's first and -1 for its second, no
# intercept); strengths centred to mean 0; the penalised log-likelihood at the estimate.
# For each separations case: for every ordered pair (i, j) of a pair that met, the one-sided
# exact p of "i ahead of j", 1 - pbinom(wins - 1, wins + losses, 0.5) (1 when nothing was
# untied), Holm over the 2 m of them with p.adjust, the claims at alpha, their transitive
# closure, and the rank bounds and best set (csranks::csranks_multinom's construction).
suppressPackageStartupMessages({
  library(brglm2)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
input <- fromJSON(args[1], simplifyVector = TRUE, simplifyMatrix = TRUE)

bt_design <- function(k, pairs) {
  X <- matrix(0, nrow(pairs), k)
  for (r in seq_len(nrow(pairs))) {
    X[r, pairs[r, 1] + 1] <- 1
    X[r, pairs[r, 2] + 1] <- -1
  }
  X[, -1, drop = FALSE]
}

firth <- lapply(input$firth, function(case) {
  k <- length(case$candidates)
  pairs <- case$pairs
  X <- bt_design(k, pairs)
  wins <- pairs[, 3]
  losses <- pairs[, 4]
  fit <- glm(cbind(wins, losses) ~ 0 + X, family = binomial("logit"),
             method = "brglmFit", type = "AS_mean", epsilon = 1e-12, maxit = 500)
  b <- unname(coef(fit))
  s <- c(0, b)
  p <- plogis(drop(X %*% b))
  n <- wins + losses
  info <- t(X) %*% (X * (n * p * (1 - p)))
  pen <- sum(wins * log(p) + losses * log(1 - p)) +
    0.5 * as.numeric(determinant(info, logarithm = TRUE)$modulus)
  list(strengths = s - mean(s), penalised_loglik = pen, converged = fit$converged)
})

separations <- lapply(input$separations, function(case) {
  k <- case$k
  pairs <- case$pairs
  n <- pairs[, 3] + pairs[, 4]
  p_first <- ifelse(n > 0, 1 - pbinom(pairs[, 3] - 1, n, 0.5), 1)
  p_second <- ifelse(n > 0, 1 - pbinom(pairs[, 4] - 1, n, 0.5), 1)
  adjusted <- p.adjust(c(p_first, p_second), "holm")
  m <- nrow(pairs)
  ahead <- matrix(FALSE, k, k)
  for (r in seq_len(m)) {
    i <- pairs[r, 1] + 1
    j <- pairs[r, 2] + 1
    ahead[i, j] <- adjusted[r] <= case$alpha
    ahead[j, i] <- adjusted[m + r] <= case$alpha
  }
  closed <- ahead
  for (via in 1:k) for (i in 1:k) for (j in 1:k) {
    if (closed[i, via] && closed[via, j]) closed[i, j] <- TRUE
  }
  lower <- 1 + colSums(closed)
  upper <- k - rowSums(closed)
  list(p_first = p_first, p_second = p_second, adjusted = adjusted,
       ahead = which(closed, arr.ind = TRUE) - 1,
       rank_best = lower, rank_worst = upper, best = which(lower == 1) - 1)
})

write(toJSON(list(firth = firth, separations = separations), digits = NA, auto_unbox = TRUE),
      args[2])
