#include "report/export/stats_export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/export/format.hpp"
#include "report/export/json.hpp"

namespace scalebench::report {
namespace {

// One pair comparison (Tukey or Games-Howell) per object, keys in the documented order.
Json pairs_json(const std::vector<StatsPairRow>& pairs) {
  Json out = Json::array();
  for (const auto& p : pairs)
    out.push_back({{"factor", p.factor},
                   {"a", p.a},
                   {"b", p.b},
                   {"diff", p.diff},
                   {"lwr", p.lwr},
                   {"upr", p.upr},
                   {"p_adj", p.p_adj}});
  return out;
}

// Significant digits for the text tables: enough to compare with R's printout.
std::string num(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Inf" : "-Inf";
  return fmt::format("{:.6g}", value);
}
std::string num(const std::optional<double>& value) { return value ? num(*value) : ""; }
std::string pval(double p) {
  if (std::isnan(p)) return "NaN";
  return fmt::format("{:.4g}", p);
}

std::string pair_table(const std::vector<StatsPairRow>& pairs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : pairs)
    rows.push_back({p.factor, p.a + "-" + p.b, num(p.diff), num(p.lwr), num(p.upr), pval(p.p_adj)});
  return aligned({"factor", "comparison", "diff", "lwr", "upr", "p adj"}, rows);
}

}  // namespace

std::string aligned(const std::vector<std::string>& header,
                    const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (c == 0)
        text += fmt::format("{:<{}}", cells[c], width[c]);
      else
        text += fmt::format("  {:>{}}", cells[c], width[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string render_stats_text(const StatsReport& report) {
  std::string out = fmt::format("Response: {}    factors: {}    source: {}\n", report.response,
                                fmt::join(report.factors, " x "), report.source);
  std::vector<std::vector<std::string>> rows;
  if (report.variance_components) {
    // The mixed model has no sums of squares: its test is a Wald F on Satterthwaite d.f.
    out += "Unit of analysis: epochs within runs (linear mixed model, run as random intercept)\n";
    out += fmt::format(
        "\nMixed model: epoch ~ {} + (1 | run), REML; F test with Satterthwaite d.f. (as R's "
        "lmerTest)\n",
        fmt::join(report.factors, " + "));
    for (const auto& r : report.anova)
      if (r.f)
        rows.push_back(
            {r.term, num(r.df), num(report.anova.back().df), num(r.f), r.p ? pval(*r.p) : ""});
    out += aligned({"term", "NumDF", "DenDF", "F value", "Pr(>F)"}, rows);
    out += fmt::format("variance components: run {} (sd {}), epoch {} (sd {})\n",
                       num(report.variance_components->first),
                       num(std::sqrt(report.variance_components->first)),
                       num(report.variance_components->second),
                       num(std::sqrt(report.variance_components->second)));
  } else {
    if (report.unit) out += fmt::format("Unit of analysis: one {} per observation\n", *report.unit);
    out += fmt::format("\nAnalysis of variance (type {} sums of squares)\n", report.ss_type);
    for (const auto& r : report.anova)
      rows.push_back({r.term, num(r.df), num(r.ss), num(r.ms), num(r.f), r.p ? pval(*r.p) : "",
                      num(r.eta_sq), num(r.partial_eta_sq), num(r.omega_sq)});
    out += aligned(
        {"term", "Df", "Sum Sq", "Mean Sq", "F value", "Pr(>F)", "eta2", "partial eta2", "omega2"},
        rows);
  }

  if (!report.tests.empty()) {
    out += "\nAssumption checks and robust alternatives\n";
    rows.clear();
    for (const auto& t : report.tests)
      rows.push_back({t.test, t.factor, fmt::format("{}={}", t.statistic_name, num(t.statistic)),
                      num(t.df1), num(t.df2), pval(t.p)});
    out += aligned({"test", "factor", "statistic", "df1", "df2", "p"}, rows);
  }
  if (!report.groups.empty()) {
    out +=
        fmt::format("\nGroups (mean with {:g}% {} confidence interval)\n", report.confidence * 100,
                    report.variance_components ? "model (Satterthwaite)" : "t");
    rows.clear();
    const bool letters = std::any_of(report.groups.begin(), report.groups.end(),
                                     [](const StatsGroupRow& g) { return g.letters.has_value(); });
    for (const auto& g : report.groups) {
      rows.push_back(
          {g.factor, g.level, num(g.n), num(g.mean), num(g.sd), num(g.ci_lower), num(g.ci_upper)});
      if (letters) rows.back().push_back(g.letters.value_or(""));
    }
    std::vector<std::string> header = {"factor", "level", "n", "mean", "sd", "lower", "upper"};
    if (letters) header.push_back("letters");
    out += aligned(header, rows);
    if (letters) out += "(groups sharing a letter do not differ in the Tukey family below)\n";
  }
  if (!report.tukey.empty()) {
    out += fmt::format(
        "\nTukey HSD ({}), {:g}% family-wise confidence\n",
        report.variance_components ? "on the mixed model, Satterthwaite d.f." : "Tukey-Kramer",
        report.confidence * 100);
    out += pair_table(report.tukey);
  }
  if (!report.games_howell.empty()) {
    out += fmt::format("\nGames-Howell (unequal variances), {:g}% family-wise confidence\n",
                       report.confidence * 100);
    out += pair_table(report.games_howell);
  }
  for (const auto& warning : report.warnings) out += "\nwarning: " + warning + "\n";
  return out;
}

namespace {

// The interaction contrast in the documented key order (docs/statistics.md).
Json contrast_json(const ContrastReport& r) {
  Json cells = Json::array();
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      cells.push_back({{r.factor_a, r.levels_a[a]},
                       {r.factor_b, r.levels_b[b]},
                       {"n", r.n[a][b]},
                       {"mean", r.means[a][b]}});
  Json out = {{"factors", {r.factor_a, r.factor_b}},
              {"cells", cells},
              {"estimate", r.contrast.estimate},
              {"se", r.contrast.se},
              {"df", r.contrast.df},
              {"t", std::isfinite(r.contrast.t) ? Json(r.contrast.t) : Json(nullptr)},
              {"p", r.contrast.p},
              {"confidence", r.confidence},
              {"ci", {r.contrast.ci.lower, r.contrast.ci.upper}}};
  if (r.log_response) {
    out["ratio_of_speedups"] = std::exp(r.contrast.estimate);
    out["ratio_ci"] = {std::exp(r.contrast.ci.lower), std::exp(r.contrast.ci.upper)};
  }
  return out;
}

}  // namespace

std::string render_stats_json(const StatsReport& report, const ContrastReport* contrast) {
  Json anova = Json::array();
  for (const auto& r : report.anova) {
    Json row = {{"term", r.term}, {"df", r.df}, {"ss", r.ss}, {"ms", r.ms}};
    if (r.f) row["F"] = *r.f, row["p"] = optional_number(r.p);
    if (r.eta_sq) {
      row["eta_sq"] = *r.eta_sq;
      row["partial_eta_sq"] = optional_number(r.partial_eta_sq);
      row["omega_sq"] = optional_number(r.omega_sq);
    }
    anova.push_back(std::move(row));
  }
  Json tests = Json::array();
  for (const auto& t : report.tests)
    tests.push_back({{"test", t.test},
                     {"factor", t.factor},
                     {"statistic", t.statistic},
                     {"statistic_name", t.statistic_name},
                     {"df1", t.df1},
                     {"df2", optional_number(t.df2)},
                     {"p", t.p}});
  Json groups = Json::array();
  for (const auto& g : report.groups)
    groups.push_back({{"factor", g.factor},
                      {"level", g.level},
                      {"n", g.n},
                      {"mean", g.mean},
                      {"sd", optional_number(g.sd)},
                      {"ci_lower", optional_number(g.ci_lower)},
                      {"ci_upper", optional_number(g.ci_upper)},
                      {"letters", g.letters ? Json(*g.letters) : Json(nullptr)}});
  Json document = {
      {"source", report.source},
      {"response", report.response},
      {"factors", report.factors},
      {"ss_type", report.ss_type},
      {"unit", report.unit ? Json(*report.unit) : Json(nullptr)},
      {"confidence", report.confidence},
      {"anova", anova},
      {"tukey", pairs_json(report.tukey)},
      {"games_howell", pairs_json(report.games_howell)},
      {"tests", tests},
      {"groups", groups},
      {"warnings", report.warnings},
      {"variance_components", report.variance_components
                                  ? Json({{"run", report.variance_components->first},
                                          {"epoch", report.variance_components->second}})
                                  : Json(nullptr)},
  };
  if (contrast) document["interaction_contrast"] = contrast_json(*contrast);
  return dump_json(document);
}

std::string render_contrast_text(const ContrastReport& r) {
  const auto& c = r.contrast;
  std::string out =
      fmt::format("\nInteraction contrast {} x {}: ({} {} - {}) - ({} {} - {}) of the cell means\n",
                  r.factor_a, r.factor_b, r.levels_a[1], r.levels_b[1], r.levels_b[0],
                  r.levels_a[0], r.levels_b[1], r.levels_b[0]);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      out += fmt::format("  {}={} {}={}: n={} mean={:.6g}\n", r.factor_a, r.levels_a[a], r.factor_b,
                         r.levels_b[b], r.n[a][b], r.means[a][b]);
  out += fmt::format(
      "  estimate {:.6g}, SE {:.6g}, t({:g}) = {:.4g}, p = {:.4g}, {:g}% CI [{:.6g}, {:.6g}]\n",
      c.estimate, c.se, c.df, c.t, c.p, r.confidence * 100, c.ci.lower, c.ci.upper);
  if (r.log_response) {
    for (int a = 0; a < 2; ++a)
      out += fmt::format("  speed-up of {} from {} {} to {}: {:.4g} (ratio of geometric means)\n",
                         r.levels_a[a], r.factor_b, r.levels_b[0], r.levels_b[1],
                         std::exp(r.means[a][1] - r.means[a][0]));
    out +=
        fmt::format("  ratio of speed-ups, {} / {}: {:.4g}, {:g}% CI [{:.4g}, {:.4g}]{}\n",
                    r.levels_a[1], r.levels_a[0], std::exp(c.estimate), r.confidence * 100,
                    std::exp(c.ci.lower), std::exp(c.ci.upper),
                    c.ci.lower > 0 || c.ci.upper < 0 ? "" : " (includes 1: no difference shown)");
  }
  return out;
}

}  // namespace scalebench::report
