#include "plotting/stats_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plotting/format.hpp"

namespace scalebench::plotting {
namespace {

// JSON number with 17 significant digits (round-trips every double); not a number -> null.
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  return fmt::format("{:.17g}", value);
}
std::string json_number(const std::optional<double>& value) {
  return value ? json_number(*value) : "null";
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string json_strings(const std::vector<std::string>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + json_string(values[i]);
  return out + "]";
}

std::string json_pairs(const std::vector<StatsPairRow>& pairs) {
  std::string out = "[";
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    out += fmt::format("{}\n    {{\"factor\": {}, \"a\": {}, \"b\": {}, \"diff\": {}, \"lwr\": {}, "
                       "\"upr\": {}, \"p_adj\": {}}}",
                       i ? "," : "", json_string(p.factor), json_string(p.a), json_string(p.b),
                       json_number(p.diff), json_number(p.lwr), json_number(p.upr),
                       json_number(p.p_adj));
  }
  return out + (pairs.empty() ? "]" : "\n  ]");
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

// A plain aligned table: first column left-aligned, the others right-aligned.
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
      if (c == 0) text += fmt::format("{:<{}}", cells[c], width[c]);
      else text += fmt::format("  {:>{}}", cells[c], width[c]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string pair_table(const std::vector<StatsPairRow>& pairs) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : pairs)
    rows.push_back({p.factor, p.a + "-" + p.b, num(p.diff), num(p.lwr), num(p.upr), pval(p.p_adj)});
  return aligned({"factor", "comparison", "diff", "lwr", "upr", "p adj"}, rows);
}

}  // namespace

std::string render_stats_text(const StatsReport& report) {
  std::string out = fmt::format("Response: {}    factors: {}    source: {}\n", report.response,
                                fmt::join(report.factors, " x "), report.source);
  if (report.unit) out += fmt::format("Unit of analysis: one {} per observation\n", *report.unit);
  out += fmt::format("\nAnalysis of variance (type {} sums of squares)\n", report.ss_type);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : report.anova)
    rows.push_back({r.term, num(r.df), num(r.ss), num(r.ms), num(r.f), r.p ? pval(*r.p) : "",
                    num(r.eta_sq), num(r.partial_eta_sq), num(r.omega_sq)});
  out += aligned({"term", "Df", "Sum Sq", "Mean Sq", "F value", "Pr(>F)", "eta2", "partial eta2",
                  "omega2"},
                 rows);

  if (!report.tests.empty()) {
    out += "\nAssumption checks and robust alternatives\n";
    rows.clear();
    for (const auto& t : report.tests)
      rows.push_back({t.test, t.factor, fmt::format("{}={}", t.statistic_name, num(t.statistic)),
                      num(t.df1), num(t.df2), pval(t.p)});
    out += aligned({"test", "factor", "statistic", "df1", "df2", "p"}, rows);
  }
  if (!report.groups.empty()) {
    out += fmt::format("\nGroups (mean with {:g}% t confidence interval)\n", report.confidence * 100);
    rows.clear();
    for (const auto& g : report.groups)
      rows.push_back({g.factor, g.level, num(g.n), num(g.mean), num(g.sd), num(g.ci_lower),
                      num(g.ci_upper)});
    out += aligned({"factor", "level", "n", "mean", "sd", "lower", "upper"}, rows);
  }
  if (!report.tukey.empty()) {
    out += fmt::format("\nTukey HSD (Tukey-Kramer), {:g}% family-wise confidence\n", report.confidence * 100);
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

std::string render_stats_json(const StatsReport& report) {
  std::string out = "{\n";
  out += fmt::format("  \"source\": {},\n  \"response\": {},\n  \"factors\": {},\n", json_string(report.source),
                     json_string(report.response), json_strings(report.factors));
  out += fmt::format("  \"ss_type\": {},\n  \"unit\": {},\n  \"confidence\": {},\n",
                     json_string(report.ss_type), report.unit ? json_string(*report.unit) : "null",
                     json_number(report.confidence));
  out += "  \"anova\": [";
  for (std::size_t i = 0; i < report.anova.size(); ++i) {
    const auto& r = report.anova[i];
    out += fmt::format("{}\n    {{\"term\": {}, \"df\": {}, \"ss\": {}, \"ms\": {}", i ? "," : "",
                       json_string(r.term), json_number(r.df), json_number(r.ss), json_number(r.ms));
    if (r.f) out += fmt::format(", \"F\": {}, \"p\": {}", json_number(r.f), json_number(r.p));
    if (r.eta_sq)
      out += fmt::format(", \"eta_sq\": {}, \"partial_eta_sq\": {}, \"omega_sq\": {}",
                         json_number(r.eta_sq), json_number(r.partial_eta_sq), json_number(r.omega_sq));
    out += "}";
  }
  out += report.anova.empty() ? "],\n" : "\n  ],\n";
  out += "  \"tukey\": " + json_pairs(report.tukey) + ",\n";
  out += "  \"games_howell\": " + json_pairs(report.games_howell) + ",\n";
  out += "  \"tests\": [";
  for (std::size_t i = 0; i < report.tests.size(); ++i) {
    const auto& t = report.tests[i];
    out += fmt::format("{}\n    {{\"test\": {}, \"factor\": {}, \"statistic\": {}, \"statistic_name\": {}, "
                       "\"df1\": {}, \"df2\": {}, \"p\": {}}}",
                       i ? "," : "", json_string(t.test), json_string(t.factor), json_number(t.statistic),
                       json_string(t.statistic_name), json_number(t.df1), json_number(t.df2),
                       json_number(t.p));
  }
  out += report.tests.empty() ? "],\n" : "\n  ],\n";
  out += "  \"groups\": [";
  for (std::size_t i = 0; i < report.groups.size(); ++i) {
    const auto& g = report.groups[i];
    out += fmt::format("{}\n    {{\"factor\": {}, \"level\": {}, \"n\": {}, \"mean\": {}, \"sd\": {}, "
                       "\"ci_lower\": {}, \"ci_upper\": {}}}",
                       i ? "," : "", json_string(g.factor), json_string(g.level), json_number(g.n),
                       json_number(g.mean), json_number(g.sd), json_number(g.ci_lower),
                       json_number(g.ci_upper));
  }
  out += report.groups.empty() ? "],\n" : "\n  ],\n";
  out += "  \"warnings\": " + json_strings(report.warnings) + "\n}\n";
  return out;
}

}  // namespace scalebench::plotting
