# Reference values for stats::interaction_contrast (tests/stats/test_interaction_contrast.cpp):
# the interaction coefficient of lm(log(ips) ~ framework * np) with treatment contrasts, its
# standard error, t, p and 95% confidence interval, on made-up images/s of two frameworks at
# np 1 and 2 (unbalanced: 3, 3, 3, 4 runs).
# Run: Rscript scripts/reference/interaction_contrast.R
ips <- c(1320, 1290, 1350,  2400, 2300, 2450,  1190, 1150, 1210,  2250, 2200, 2310, 2280)
framework <- factor(c(rep("ours", 6), rep("torch", 7)), levels = c("ours", "torch"))
np <- factor(c(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2), levels = c(1, 2))
fit <- lm(log(ips) ~ framework * np)
s <- summary(fit)$coefficients["frameworktorch:np2", ]
ci <- confint(fit, "frameworktorch:np2", level = 0.95)
options(digits = 17)
cat(sprintf("estimate %.17g\nse %.17g\nt %.17g\np %.17g\ndf %d\nlower %.17g\nupper %.17g\n",
            s[["Estimate"]], s[["Std. Error"]], s[["t value"]], s[["Pr(>|t|)"]],
            fit$df.residual, ci[1], ci[2]))
