# Reference values for stats::nested_anova (tests/stats/test_nested_anova.cpp): epochs within runs
# within groups, lmerTest::lmer(y ~ g + (1 | run)) by REML with Satterthwaite d.f.: anova()'s F
# test, each group mean and each pair with contest1D, Tukey's p on each pair's d.f. (as emmeans
# with lmer.df = "satterthwaite"), each speed-up against the first group with its log-scale
# interval (contest1D of the delta method's contrast), and for balanced designs
# aov(y ~ g + Error(run)).
# Run: Rscript scripts/reference/nested_anova.R > tests/data/stats/nested_anova.txt
# (R 4.2.2, lme4 1.1-31 and lmerTest 3.1-3 from Debian's r-cran-lme4 and r-cran-lmertest.)
suppressMessages(library(lmerTest))
set.seed(20261125)

# k groups; runs[i] runs in group i; epochs of run j drawn from sizes; group means mu, run sd,
# epoch sd.
simulate <- function(mu, runs, sizes, run_sd, epoch_sd) {
  rows <- list()
  id <- 0
  for (i in seq_along(mu)) {
    for (j in seq_len(runs[i])) {
      id <- id + 1
      n <- if (length(sizes) == 1) sizes else sample(sizes, 1)
      b <- rnorm(1, sd = run_sd)
      rows[[id]] <- data.frame(g = sprintf("g%d", i), run = sprintf("r%d", id),
                               y = round(mu[i] + b + rnorm(n, sd = epoch_sd), 6))
    }
  }
  d <- do.call(rbind, rows)
  d$g <- factor(d$g)
  d$run <- factor(d$run, levels = unique(d$run))
  d
}

sets <- list(
  balanced = simulate(c(10, 10.4, 11), c(3, 3, 3), 5, 0.3, 0.2),
  unbalanced = simulate(c(5, 5.2, 5.1, 6), c(2, 3, 4, 3), 3:8, 0.15, 0.25),
  quickstart = simulate(c(12.1, 12.3, 6.9), c(3, 3, 3), 5, 0.08, 0.12),
  many_small = simulate(c(1, 1.05, 1.1, 1.2, 1.3), c(2, 2, 3, 2, 4), 2:4, 0.04, 0.03),
  # Means around 1e6 with a spread of 0.1: the fit must not lose digits to the offset.
  offset = simulate(1e6 + c(0, 0.2, 0.5), c(3, 4, 3), 4:6, 0.1, 0.08)
)

control <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-12, maxfun = 1e5))
cat("# set data group run values...\n")
cat("# set variance run epoch | anova F num_df den_df p | aov F den_df (balanced only)\n")
cat("# set mean group estimate se df | pair a b estimate se df p_tukey\n")
cat("# set speedup base group ratio lower upper se_log df\n")
for (name in names(sets)) {
  d <- sets[[name]]
  for (r in levels(d$run)) {
    part <- d[d$run == r, ]
    cat(name, "data", as.character(part$g[1]), r, format(part$y, digits = 17), "\n")
  }
  # The offset set is fitted on centred values (lme4 itself loses digits at 1e6): the same model.
  shift <- if (name == "offset") 1e6 else 0
  d$yc <- d$y - shift
  m <- lmer(yc ~ g + (1 | run), data = d, REML = TRUE, control = control)
  vc <- as.data.frame(VarCorr(m))
  cat(name, "variance", format(vc$vcov[vc$grp == "run"], digits = 17),
      format(vc$vcov[vc$grp == "Residual"], digits = 17), "\n")
  a <- anova(m)
  cat(name, "anova", format(c(a$`F value`, a$NumDF, a$DenDF, a$`Pr(>F)`), digits = 17), "\n")
  if (name %in% c("balanced", "quickstart")) {
    s <- summary(aov(yc ~ g + Error(run), data = d))[["Error: run"]][[1]]
    cat(name, "aov", format(c(s$`F value`[1], s$Df[2]), digits = 17), "\n")
  }
  k <- nlevels(d$g)
  cell <- function(i) { l <- numeric(k); l[1] <- 1; if (i > 1) l[i] <- 1; l }
  for (i in seq_len(k)) {
    e <- contest1D(m, cell(i))
    cat(name, "mean", levels(d$g)[i],
        format(c(e$Estimate + shift, e$`Std. Error`, e$df), digits = 17), "\n")
  }
  for (i in 1:(k - 1)) for (j in (i + 1):k) {
    e <- contest1D(m, cell(j) - cell(i))
    p <- ptukey(sqrt(2) * abs(e$`t value`), k, e$df, lower.tail = FALSE)
    cat(name, "pair", levels(d$g)[i], levels(d$g)[j],
        format(c(e$Estimate, e$`Std. Error`, e$df, p), digits = 17), "\n")
  }
  # The speed-up of each group against the first, mean_1 / mean_j, with its 95% interval on the
  # log scale: the delta method's contrast L = cell(1) / mean_1 - cell(j) / mean_j (the gradient
  # of log(mean_1 / mean_j)) through contest1D, so that its standard error and its one
  # Satterthwaite d.f. come from the fitted model, not from two means' d.f. added (Welch).
  # (On the centred values of the offset set the ratio would change: that set is left out.)
  if (name != "offset") {
    means <- sapply(seq_len(k), function(i) sum(cell(i) * fixef(m)))
    for (j in 2:k) {
      e <- contest1D(m, cell(1) / means[1] - cell(j) / means[j])
      ratio <- means[1] / means[j]
      half <- qt(0.975, e$df) * e$`Std. Error`
      cat(name, "speedup", levels(d$g)[1], levels(d$g)[j],
          format(c(ratio, exp(log(ratio) - half), exp(log(ratio) + half), e$`Std. Error`, e$df),
                 digits = 17), "\n")
    }
  }
}
