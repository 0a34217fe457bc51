# Firth reference values for tests/test_style_control.py, made outside blindtest and outside
# Python: run by style_control_reference.py (which says how to regenerate); not run by tests.
#
#   Rscript tests/data/style_control_firth_reference.R IN.json OUT.json
#
# IN holds cases {name: {y: [...], z: [[1, x1, ...], ...]}} (z with its intercept column).
# For each case:
#   - Firth's estimates and standard errors from brglm2 (glm method "brglmFit", type "AS_mean",
#     which for the logistic link is Firth's 1993 penalised likelihood; Kosmidis and Firth 2009);
#   - the penalised log-likelihood l(b) + 1/2 log det(Z'WZ) at that estimate, written out here;
#   - the penalised likelihood-ratio statistic of every column but the intercept (style fixed
#     at 0, the intercept maximised by optimize(), the penalty of the full design);
#   - profile penalised-likelihood 95% bounds for every coefficient (Heinze and Schemper 2002:
#     the other coefficients maximised by optim() BFGS, the bound found by uniroot());
#   - which ML estimates are infinite: the ML glm refitted with 1 to 30 IRLS iterations, a
#     standard error 100 times its first-iteration value marking an infinite estimate (the
#     method of detectseparation's check_infinite_estimates; Lesaffre and Albert, 1989).
suppressPackageStartupMessages({
  library(brglm2)
  library(jsonlite)
})

args <- commandArgs(trailingOnly = TRUE)
cases <- fromJSON(args[1], simplifyVector = TRUE, simplifyMatrix = TRUE)

log1pexp <- function(eta) ifelse(eta > 0, eta + log1p(exp(-eta)), log1p(exp(eta)))

penalised <- function(b, Z, y) {
  eta <- drop(Z %*% b)
  p <- plogis(eta)
  w <- p * (1 - p)
  info <- crossprod(Z, Z * w)
  d <- determinant(info, logarithm = TRUE)
  if (d$sign <= 0) return(-Inf)
  sum(y * eta - log1pexp(eta)) + 0.5 * as.numeric(d$modulus)
}

# The gradient of the penalised log-likelihood: Z'(y - p + h (1/2 - p)), h the hat values.
gradient <- function(b, Z, y) {
  eta <- drop(Z %*% b)
  p <- plogis(eta)
  w <- p * (1 - p)
  info <- crossprod(Z, Z * w)
  h <- w * rowSums((Z %*% solve(info)) * Z)
  drop(crossprod(Z, y - p + h * (0.5 - p)))
}

profile_at <- function(j, value, est, Z, y) {
  if (ncol(Z) == 1) {
    return(penalised(value, Z, y))
  }
  f <- function(free) {
    b <- numeric(ncol(Z))
    b[j] <- value
    b[-j] <- free
    -penalised(b, Z, y)
  }
  g <- function(free) {
    b <- numeric(ncol(Z))
    b[j] <- value
    b[-j] <- free
    -gradient(b, Z, y)[-j]
  }
  o <- optim(est[-j], f, g, method = "BFGS",
             control = list(reltol = 1e-16, maxit = 10000))
  -o$value
}

out <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  y <- as.numeric(case$y)
  Z <- as.matrix(case$z)
  colnames(Z) <- paste0("z", seq_len(ncol(Z)))
  fit <- glm(y ~ Z - 1, family = binomial(), method = "brglmFit", type = "AS_mean",
             control = list(epsilon = 1e-12, maxit = 10000))
  cat(name, "converged", fit$converged, "\n", file = stderr())
  est <- unname(coef(fit))
  se <- unname(sqrt(diag(vcov(fit))))
  top <- penalised(est, Z, y)
  q <- qchisq(0.95, 1)
  lo <- hi <- numeric(ncol(Z))
  for (j in seq_len(ncol(Z))) {
    gap <- function(v) 2 * (top - profile_at(j, v, est, Z, y)) - q
    step <- max(se[j], 0.5)
    far <- step
    while (gap(est[j] - far) < 0) far <- 2 * far
    lo[j] <- uniroot(function(d) gap(est[j] - d), c(0, far), tol = 1e-13)$root
    lo[j] <- est[j] - lo[j]
    far <- step
    while (gap(est[j] + far) < 0) far <- 2 * far
    hi[j] <- est[j] + uniroot(function(d) gap(est[j] + d), c(0, far), tol = 1e-13)$root
  }
  reduced <- optimize(function(a) {
    b <- numeric(ncol(Z))
    b[1] <- a
    -penalised(b, Z, y)
  }, c(-60, 60), tol = 1e-13)
  statistic <- 2 * (top + reduced$objective)
  df <- ncol(Z) - 1
  ml_se <- function(k) {
    m <- suppressWarnings(glm(y ~ Z - 1, family = binomial(),
                              control = list(epsilon = 1e-300, maxit = k)))
    sqrt(diag(summary(m)$cov.unscaled))
  }
  last <- ml_se(30) / ml_se(1)
  out[[name]] <- list(
    estimate = est, se = se, penalised_loglik = top, lo = lo, hi = hi,
    plr_statistic = statistic, plr_df = df,
    plr_p_value = pchisq(statistic, df, lower.tail = FALSE),
    ml_se_growth = unname(last),
    ml_infinite = unname(last > 100)
  )
}
meta <- list(
  R = R.version.string,
  brglm2 = as.character(packageVersion("brglm2")),
  jsonlite = as.character(packageVersion("jsonlite"))
)
writeLines(toJSON(list(meta = meta, cases = out), digits = NA, auto_unbox = TRUE), args[2])
