# Reference letters for stats::compact_letters (tests/stats/test_compact_letters.cpp): R's
# multcomp::cld on the all-pairs Tukey comparisons of one-way designs, with the data.
# Run: Rscript scripts/reference/compact_letters.R > tests/data/stats/compact_letters.txt
# (R 4.2.2, multcomp from Debian's r-cran-multcomp.) The script stops if TukeyHSD's and glht's
# adjusted p-values disagree about significance at 0.05 for any pair (the test uses the former,
# cld the latter).
suppressMessages(library(multcomp))
set.seed(20261125)
sets <- list(
  insectsprays = data.frame(y = InsectSprays$count, g = InsectSprays$spray),
  plantgrowth = data.frame(y = PlantGrowth$weight, g = PlantGrowth$group),
  chickwts = data.frame(y = chickwts$weight, g = chickwts$feed),
  warpbreaks = data.frame(y = warpbreaks$breaks, g = warpbreaks$tension),
  # Eight overlapping groups: letters that need the sweep.
  overlapping = data.frame(y = round(rep(c(10, 11, 12, 13, 14, 15, 16, 17), each = 6) +
                                       rnorm(48, sd = 1.2), 3),
                           g = factor(rep(sprintf("g%d", 1:8), each = 6)))
)
cat("# set kind group values... | letters\n")
for (name in names(sets)) {
  d <- sets[[name]]
  d$g <- factor(d$g)
  fit <- aov(y ~ g, data = d)
  tk <- TukeyHSD(fit)$g[, "p adj"]
  gl <- summary(glht(fit, linfct = mcp(g = "Tukey")))$test$pvalues
  if (any((tk < 0.05) != (gl < 0.05))) stop(name, ": TukeyHSD and glht disagree at 0.05")
  letters_cld <- cld(glht(fit, linfct = mcp(g = "Tukey")), level = 0.05)$mcletters$Letters
  for (lvl in levels(d$g)) {
    cat(name, "data", lvl, format(d$y[d$g == lvl], digits = 17), "\n")
  }
  for (lvl in levels(d$g)) cat(name, "letters", lvl, letters_cld[[lvl]], "\n")
}
