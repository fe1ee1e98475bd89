# Reference intervals for images/s and scaling efficiency (report's delta method, docs/metrics.md)
# on the committed Table 2 quick database, unit run, computed from the epochs with R alone:
#   images/s CI  = images/s x exp(-/+ qt(0.975, R - 1) x se/mean) over the group's R run means;
#   efficiency CI = efficiency x exp(log(r) -/+ qt(0.975, df_W) x sqrt(cv_ref^2 + cv^2)) / r,
#   r = mean(ref) / mean, cv = se/mean, df_W = Welch-Satterthwaite on the cv's (Welch 1947),
#   the reference being the np = 1 group of the same condition and model (the base's for single).
# Run: Rscript scripts/reference/rate_intervals.R tests/data/db/table2-quick.db \
#        > tests/data/report/rate_intervals.txt       (R 4.2.2; sqlite3 reads the database)
args <- commandArgs(trailingOnly = TRUE)
query <- paste(
  "SELECT r.condition, f.level, r.np, r.id, e.duration_seconds, r.train_images",
  "FROM epochs e JOIN runs r ON r.id = e.run_id JOIN run_factors f ON f.run_id = r.id",
  "WHERE r.status = 'ok' AND f.factor = 'model' ORDER BY r.id, e.epoch")
rows <- read.table(text = system2("sqlite3", c("-separator", "' '", args[1], shQuote(query)),
                                  stdout = TRUE),
                   col.names = c("condition", "model", "np", "run", "d", "images"))
rows$group <- with(rows, ifelse(condition == "single", paste0("single model=", model),
                                paste0(condition, " model=", model, " np=", np)))
groups <- lapply(split(rows, rows$group), function(g) {
  m <- tapply(g$d, g$run, mean)
  list(mean = mean(m), se = sd(m) / sqrt(length(m)), df = length(m) - 1,
       rate = sum(g$images) / sum(g$d), np = g$np[1], condition = g$condition[1],
       model = g$model[1])
})
cat("# group images_ci_lower images_ci_upper efficiency_ci_lower efficiency_ci_upper\n")
for (name in names(groups)) {
  g <- groups[[name]]
  t <- qt(0.975, g$df)
  img <- g$rate * exp(c(-1, 1) * t * g$se / g$mean)
  ref_name <- paste0("hvd model=", g$model, " np=1")
  eff <- c(NA, NA)
  if (name != ref_name) {
    ref <- groups[[ref_name]]
    efficiency <- g$rate / (ref$rate * g$np / ref$np)
    r <- ref$mean / g$mean
    cv2 <- c((ref$se / ref$mean)^2, (g$se / g$mean)^2)
    df_w <- sum(cv2)^2 / sum(cv2^2 / c(ref$df, g$df))
    eff <- efficiency * exp(log(r) + c(-1, 1) * qt(0.975, df_w) * sqrt(sum(cv2))) / r
  }
  cat(sprintf("%s|%.17g|%.17g|%.17g|%.17g\n", name, img[1], img[2], eff[1], eff[2]))
}
