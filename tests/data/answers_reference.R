# Reference p-values for the extra questions' tests, from R (not from blindtest).
#
# Do not edit answers_reference_r.json; regenerate from the repository root with
#     Rscript tests/data/answers_reference.R > tests/data/answers_reference_r.json
# Made with R 4.2.2 Patched (2022-11-10 r83330), base stats and jsonlite, 2026-12-03.
#
# - mcnemar: the exact McNemar test of b discordant pairs one way and c the other, which is
#   binom.test(b, b + c, 0.5) two-sided (mcnemar.test is the asymptotic chi-square, not used).
# - fisher: fisher.test on the 2x2 table [[a, b], [c, d]] (rows first), two-sided.
suppressPackageStartupMessages(library(jsonlite))

mcnemar <- list()
pairs <- expand.grid(b = 0:25, c = 0:25)
pairs <- rbind(pairs, data.frame(b = c(40, 100, 7, 250, 0, 1), c = c(60, 130, 1, 301, 40, 60)))
for (i in seq_len(nrow(pairs))) {
  b <- pairs$b[i]; c <- pairs$c[i]
  if (b + c == 0) next
  mcnemar[[length(mcnemar) + 1]] <- list(
    b = b, c = c, p = binom.test(b, b + c, 0.5, alternative = "two.sided")$p.value
  )
}

fisher <- list()
cells <- expand.grid(a = 0:6, b = 0:6, c = 0:6, d = 0:6)
cells <- rbind(cells, data.frame(
  a = c(12, 30, 3, 50, 0, 20, 9), b = c(5, 10, 14, 45, 17, 1, 9),
  c = c(3, 15, 9, 38, 25, 2, 9), d = c(10, 25, 2, 60, 0, 30, 10)
))
for (i in seq_len(nrow(cells))) {
  t <- cells[i, ]
  m <- matrix(c(t$a, t$c, t$b, t$d), nrow = 2)  # column-major: [[a, b], [c, d]]
  fisher[[length(fisher) + 1]] <- list(
    a = t$a, b = t$b, c = t$c, d = t$d,
    p = fisher.test(m, alternative = "two.sided")$p.value
  )
}

cat(toJSON(list(
  tool = R.version.string,
  generated = "2026-12-03",
  mcnemar = mcnemar,
  fisher = fisher
), auto_unbox = TRUE, digits = NA, pretty = FALSE))
cat("\n")
