#include "scaling/plan_output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "report/export/format.hpp"
#include "report/export/json.hpp"
#include "report/export/markup.hpp"
#include "report/export/plain_table.hpp"
#include "scaling/network_presets.hpp"
#include "scaling/validation.hpp"
#include "util/text.hpp"

namespace scalebench::scaling {

using namespace report;  // the tables, formats and errors it draws and prints

namespace {

// Three significant digits: parameters and predictions span microseconds to hours.
std::string number(double v) {
  if (!std::isfinite(v)) return "N.A.";
  if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) return fmt::format("{:.3g}", v);
  if (std::abs(v) >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string value_text(const PlanValue& v, double scale = 1, std::string (*show)(double) = number) {
  if (!v.interval) return show(v.value * scale);
  return fmt::format("{} [{}, {}]", show(v.value * scale), show(v.interval->low * scale),
                     show(v.interval->high * scale));
}

std::string percent(double fraction) { return format_percent(fraction); }

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

// The measured mean step in ms, with its t interval over the runs where there are two or more.
std::string measured_step_text(const PlanRow& r) {
  const std::string mean = number(*r.measured_step_seconds * 1e3);
  if (!r.measured_step_interval) return fmt::format("{} (n={})", mean, r.measured_runs);
  return fmt::format("{} [{}, {}] (n={})", mean, number(r.measured_step_interval->low * 1e3),
                     number(r.measured_step_interval->high * 1e3), r.measured_runs);
}

// The hold-out table's honesty check: how many held-out np the band covers; empty without one.
std::string coverage_text(const ScalingPlan& plan) {
  if (!plan.coverage) return "";
  const auto& c = *plan.coverage;
  return fmt::format(
      "Band coverage: {} of {} held-out np inside the {:g}% band{} (measured images/s, with its "
      "mean's own interval, against the predicted band{}).",
      c.inside, c.held_out, 100 * plan.level,
      c.outside.empty() ? "" : fmt::format("; outside: np={}", fmt::join(c.outside, ", np=")),
      plan.model_error ? ", which includes the model's own error"
                       : ", the bootstrap's alone: it does not include the model's own error");
}

std::vector<std::string> headers(const ScalingPlan& plan) {
  // A bootstrap interval is a confidence interval; widened by the model's error it is a band.
  const std::string ci =
      fmt::format(" [{:g}% {}]", 100 * plan.level, plan.model_error ? "band" : "CI");
  const bool intervals = plan.replicates > 0;
  std::vector<std::string> h = {"np", "step (ms)" + (intervals ? ci : ""),
                                "images/s" + (intervals ? ci : ""),
                                "efficiency" + (intervals ? ci : "")};
  if (std::any_of(plan.rows.begin(), plan.rows.end(),
                  [](const PlanRow& r) { return r.epoch_seconds.has_value(); }))
    h.push_back("epoch (s)" + (intervals ? ci : ""));
  if (std::any_of(plan.rows.begin(), plan.rows.end(),
                  [](const PlanRow& r) { return r.measured_step_seconds.has_value(); })) {
    h.push_back("measured step (ms)");
    h.push_back("measured efficiency");
    h.push_back("step error");
  }
  return h;
}

std::vector<std::vector<std::string>> body(const ScalingPlan& plan) {
  const auto h = headers(plan);
  const bool epoch =
      std::any_of(h.begin(), h.end(), [](const std::string& s) { return s.starts_with("epoch"); });
  const bool measured = h.back() == "step error";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : plan.rows) {
    std::vector<std::string> cells = {
        std::to_string(r.np) + (r.held_out ? " (held out)" : ""), value_text(r.step_seconds, 1e3),
        value_text(r.images_per_second), value_text(r.efficiency, 1, percent)};
    if (epoch) cells.push_back(r.epoch_seconds ? value_text(*r.epoch_seconds) : "");
    if (measured) {
      cells.push_back(r.measured_step_seconds ? measured_step_text(r) : "");
      cells.push_back(r.measured_efficiency ? percent(*r.measured_efficiency) : "");
      cells.push_back(r.step_error ? signed_percent(*r.step_error) : "");
    }
    rows.push_back(cells);
  }
  return rows;
}

std::vector<std::vector<std::string>> parameter_rows(const ScalingPlan& plan) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : plan.parameters)
    rows.push_back({p.name + (p.unit.empty() ? "" : " (" + p.unit + ")"), value_text(p.value),
                    p.origin + (p.at_bound ? "; at bound, not identified" : "")});
  return rows;
}

// The first column (what the row is) left, numbers right; with text_last, the last one left too.
std::string alignment(std::size_t columns, bool text_last = false) {
  std::string out = "l" + std::string(columns - 1, 'r');
  if (text_last) out.back() = 'l';
  return out;
}

std::string markdown(const ScalingPlan& plan) {
  std::string out =
      fmt::format("## {}\n\n- Source: {}\n\n### Parameters\n\n", plan.title, plan.source);
  out += markdown_table({"parameter", fmt::format("value [{:g}% CI]", 100 * plan.level), "from"},
                        alignment(3, true), parameter_rows(plan));
  out += "\n### Predicted\n\n" +
         markdown_table(headers(plan), alignment(headers(plan).size()), body(plan));
  if (plan.coverage) out += "\n" + coverage_text(plan) + "\n";
  if (!plan.notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : plan.notes) out += "- " + n + "\n";
  }
  return out;
}

std::string csv(const ScalingPlan& plan) {
  // One row per np, numbers exact, intervals as their own columns (empty when absent).
  std::string out =
      "np,step_seconds,step_low,step_high,images_per_second,images_per_second_low,"
      "images_per_second_high,efficiency,efficiency_low,efficiency_high,epoch_seconds,"
      "epoch_low,epoch_high,measured_step_seconds,measured_efficiency,measured_runs,held_out,"
      "step_error,model_error,inside_band,measured_step_low,measured_step_high\n";
  const auto value = [](const std::optional<PlanValue>& v) {
    if (!v) return std::string(",,");
    return fmt::format("{},{},{}", format_exact(v->value),
                       v->interval ? format_exact(v->interval->low) : "",
                       v->interval ? format_exact(v->interval->high) : "");
  };
  const auto opt = [](const std::optional<double>& v) {
    return v ? format_exact(*v) : std::string();
  };
  // model_error: the model error's scale (log) at np; inside_band: 1 or 0 for a held-out np.
  // measured_step_low/high: the measured mean's t interval over its runs.
  for (const auto& r : plan.rows)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.np, value(r.step_seconds),
        value(r.images_per_second), value(r.efficiency), value(r.epoch_seconds),
        opt(r.measured_step_seconds), opt(r.measured_efficiency),
        r.measured_step_seconds ? std::to_string(r.measured_runs) : "", r.held_out ? "1" : "0",
        opt(r.step_error), opt(r.model_error), r.inside_band ? (*r.inside_band ? "1" : "0") : "",
        r.measured_step_interval ? format_exact(r.measured_step_interval->low) : "",
        r.measured_step_interval ? format_exact(r.measured_step_interval->high) : "");
  return out;
}

// The model's JSON (format_version 1) has always had its keys in alphabetical order: kept so.
Json sorted_keys(const Json& value) {
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& item : value) out.push_back(sorted_keys(item));
    return out;
  }
  if (!value.is_object()) return value;
  std::vector<std::string> keys;
  for (const auto& [key, item] : value.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  Json out = Json::object();
  for (const auto& key : keys) out[key] = sorted_keys(value.at(key));
  return out;
}

Json json_value(const PlanValue& v) {
  Json j = {{"value", v.value}};
  if (v.interval) j["interval"] = {v.interval->low, v.interval->high};
  if (v.bootstrap) j["bootstrap_interval"] = {v.bootstrap->low, v.bootstrap->high};
  return j;
}

// What the predicted intervals hold: the model's error (its leave-one-np-out residuals) and the
// held-out np the band covers.
Json json_band(const ScalingPlan& plan) {
  Json band = {{"level", plan.level}, {"includes_model_error", plan.model_error.has_value()}};
  if (plan.model_error) {
    const auto& e = *plan.model_error;
    Json residuals = Json::array();
    for (const auto& r : e.residuals)
      residuals.push_back({{"np", r.ranks},
                           {"measured_step_seconds", r.measured_step_seconds},
                           {"predicted_step_seconds", r.predicted_step_seconds},
                           {"log_residual", r.log_residual}});
    band["model_error"] = {{"rms_log", e.rms},
                           {"degrees_of_freedom", e.degrees_of_freedom},
                           {"t_quantile", plan.model_error_quantile},
                           {"largest_fitted_np", e.largest_fitted_np},
                           {"leave_one_np_out", residuals}};
  }
  if (plan.coverage)
    band["coverage"] = {{"held_out", plan.coverage->held_out},
                        {"inside", plan.coverage->inside},
                        {"outside_np", plan.coverage->outside},
                        {"text", coverage_text(plan)}};
  return band;
}

std::string json(const ScalingPlan& plan) {
  Json j;
  j["format_version"] = 1;
  j["title"] = plan.title;
  j["source"] = plan.source;
  j["level"] = plan.level;
  j["bootstrap_replicates"] = plan.replicates;
  j["failed_replicates"] = plan.failed_replicates;
  j["parameters"] = Json::array();
  for (const auto& p : plan.parameters)
    j["parameters"].push_back({{"name", p.name},
                               {"unit", p.unit},
                               {"origin", p.origin},
                               {"at_bound", p.at_bound},
                               {"estimate", json_value(p.value)}});
  j["rows"] = Json::array();
  for (const auto& r : plan.rows) {
    Json row = {{"np", r.np},
                {"step_seconds", json_value(r.step_seconds)},
                {"images_per_second", json_value(r.images_per_second)},
                {"efficiency", json_value(r.efficiency)},
                {"held_out", r.held_out}};
    if (r.epoch_seconds) row["epoch_seconds"] = json_value(*r.epoch_seconds);
    if (r.measured_step_seconds) {
      row["measured_step_seconds"] = *r.measured_step_seconds;
      row["measured_runs"] = r.measured_runs;
      row["step_error"] = *r.step_error;
      row["measured_run_steps"] = r.measured_run_steps;
      if (r.measured_step_interval)
        row["measured_step_interval"] = {r.measured_step_interval->low,
                                         r.measured_step_interval->high};
    }
    if (r.measured_efficiency) row["measured_efficiency"] = *r.measured_efficiency;
    if (r.model_error) row["model_error"] = *r.model_error;
    if (r.inside_band) row["inside_band"] = *r.inside_band;
    j["rows"].push_back(row);
  }
  if (plan.replicates > 0) j["band"] = json_band(plan);
  j["notes"] = plan.notes;
  return dump_json(sorted_keys(j));
}

// "tab:model-<title's letters and digits>": no control sequence in a label.
std::string latex_label(const std::string& title) {
  return "tab:model-" + util::alnum_or_dash(title);
}

// The predicted table for LaTeX, narrow enough for a standard article's text width (345 pt) at
// \small without shrinking: np, step, efficiency and the measured mean step (with its t interval)
// and efficiency, each value on one row and its interval on the row below (images/s = np x batch
// / step, the epoch time and the step error are in the other formats). A held-out np is marked
// with an asterisk.
std::string latex_predicted(const ScalingPlan& plan) {
  const bool measured = std::any_of(plan.rows.begin(), plan.rows.end(), [](const PlanRow& r) {
    return r.measured_step_seconds.has_value();
  });
  // Two header rows keep the columns as narrow as their numbers.
  const std::string band = plan.replicates == 0 ? ""
                                                : fmt::format("[{:g}\\% {}]", 100 * plan.level,
                                                              plan.model_error ? "band" : "CI");
  std::vector<std::string> header = {"np", "step (ms)", "efficiency (\\%)"};
  std::vector<std::string> under = {"", band, band};
  if (measured) {
    header.insert(header.end(), {"measured", "measured"});
    under.insert(under.end(),
                 {fmt::format("step (ms) [{:g}\\% CI]", 100 * plan.level), "efficiency (\\%)"});
  }
  const auto pct = [](double v) { return fmt::format("{:.1f}", 100 * v); };
  const auto interval = [](const std::optional<Interval>& i, double scale,
                           std::string (*show)(double)) {
    return i ? fmt::format("[{}, {}]", show(i->low * scale), show(i->high * scale)) : std::string();
  };
  const auto pct_of = [](double v) { return fmt::format("{:.1f}", v); };
  std::string out = fmt::format("\\begin{{tabular}}{{{}}}\n\\toprule\n", alignment(header.size()));
  out += fmt::format("{} \\\\\n", fmt::join(header, " & "));
  if (plan.replicates > 0 || measured) out += fmt::format("{} \\\\\n", fmt::join(under, " & "));
  out += "\\midrule\n";
  for (const auto& r : plan.rows) {
    std::vector<std::string> values = {std::to_string(r.np) + (r.held_out ? "$^{*}$" : ""),
                                       tex(number(r.step_seconds.value * 1e3)),
                                       pct(r.efficiency.value)};
    std::vector<std::string> intervals = {"", interval(r.step_seconds.interval, 1e3, number),
                                          interval(r.efficiency.interval, 100, pct_of)};
    if (measured) {
      values.push_back(r.measured_step_seconds ? number(*r.measured_step_seconds * 1e3) : "");
      values.push_back(r.measured_efficiency ? pct(*r.measured_efficiency) : "");
      intervals.push_back(interval(r.measured_step_interval, 1e3, number));
      intervals.push_back("");
    }
    out += fmt::format("{} \\\\\n", fmt::join(values, " & "));
    if (std::any_of(intervals.begin(), intervals.end(),
                    [](const std::string& s) { return !s.empty(); }))
      out += fmt::format("{} \\\\[2pt]\n", fmt::join(intervals, " & "));
  }
  return out + "\\bottomrule\n\\end{tabular}\n";
}

std::string latex(const ScalingPlan& plan, bool paper) {
  // Needs booktabs (as the report's tables); nothing is shrunk.
  std::string out = fmt::format("% {}\n% Source: {}\n", tex(plan.title), tex(plan.source));
  // A column's width (3.4 in in a two-column paper): \small with narrower gaps.
  out += "\\begin{table}[htbp]\n\\centering\n\\small\n\\setlength{\\tabcolsep}{4pt}\n";
  out += fmt::format("\\caption{{{}: fitted parameters}}\n", tex(plan.title));
  // A column's width: the at-bound flag is a mark, explained under the tabular.
  auto parameters = parameter_rows(plan);
  bool at_bound = false;
  for (auto& row : parameters) {
    const auto flag = row.back().find("; at bound, not identified");
    if (flag == std::string::npos) continue;
    row.back() = row.back().substr(0, flag) + " †";
    at_bound = true;
  }
  out += latex_tabular({"parameter", fmt::format("value [{:g}% CI]", 100 * plan.level), "from"},
                       alignment(3), parameters);
  if (at_bound)
    out +=
        "\\par\\smallskip{\\footnotesize † At its bound: not identified by these "
        "data.\\par}\n";
  out += fmt::format("\\label{{{}-parameters}}\n", latex_label(plan.title));
  // A text width (table*: both columns of a two-column paper), at \small.
  out += "\\end{table}\n\\begin{table*}[htbp]\n\\centering\n\\small\n";
  const bool held_out =
      std::any_of(plan.rows.begin(), plan.rows.end(), [](const PlanRow& r) { return r.held_out; });
  out += fmt::format(
      "\\caption{{{}: predicted step time and efficiency{} (images/s = np $\\times$ {} / "
      "step){}}}\n",
      tex(plan.title),
      plan.replicates == 0
          ? ""
          : tex(fmt::format(", each with its {:g}% {} on the row below", 100 * plan.level,
                            plan.model_error ? "band" : "bootstrap interval")),
      plan.batch, held_out ? "; $^{*}$ held out of the fit" : "");
  out += fmt::format("\\label{{{}-predicted}}\n", latex_label(plan.title));
  out += latex_predicted(plan);
  out += "\\par\\smallskip\n{\\raggedright\\footnotesize\n";
  if (plan.coverage) out += tex(coverage_text(plan)) + "\\par\n";
  for (const auto& n : paper ? plan.paper_notes : plan.notes) out += tex(n) + "\\par\n";
  return out + "}\n\\end{table*}\n";
}

std::string html_page(const ScalingPlan& plan, const std::optional<std::string>& svg, bool paper) {
  std::string out = page_head("scalebench: " + plan.title);
  out += fmt::format("<h1>{}</h1>\n<p>Source: {}</p>\n", html(plan.title), html(plan.source));
  out += "<h2>Parameters</h2>\n";
  out += html_table({"parameter", fmt::format("value [{:g}% CI]", 100 * plan.level), "from"},
                    parameter_rows(plan));
  out += "<h2>Predicted</h2>\n" + html_table(headers(plan), body(plan));
  if (plan.coverage) out += "<p>" + html(coverage_text(plan)) + "</p>\n";
  if (svg)
    out += figure_block(*svg,
                        "Predicted efficiency and images/s with their band; measured "
                        "runs (open circles) and means with their t interval, those held out of "
                        "the fit marked apart.");
  out += notes_list(paper ? plan.paper_notes : plan.notes);
  return out + "</body>\n</html>\n";
}

}  // namespace

const std::vector<std::string>& scaling_plan_formats() {
  static const std::vector<std::string> formats = exporter_names();  // the report's formats
  return formats;
}

void require_scaling_plan_format(std::string_view format) {
  const auto& known = scaling_plan_formats();
  if (std::find(known.begin(), known.end(), format) == known.end())
    throw ReportError(
        fmt::format("unknown format '{}' (known: {})", format, fmt::join(known, ", ")));
}

std::string format_scaling_plan(const ScalingPlan& plan, std::string_view format,
                                const std::optional<std::string>& svg, bool paper) {
  if (format == "markdown") return markdown(plan);
  if (format == "csv") return csv(plan);
  if (format == "json") return json(plan);
  if (format == "latex") return latex(plan, paper);
  require_scaling_plan_format(format);
  return html_page(plan, svg, paper);
}

std::string network_presets_table() {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : network_presets())
    rows.push_back({p.name, p.description, fmt::format("{:g}", p.link.alpha * 1e6),
                    fmt::format("{:g}", p.link.bandwidth * 1e-9), p.source});
  return report::markdown_table({"preset", "what", "latency (us)", "bandwidth (GB/s)", "source"},
                                "llrrl", rows);
}

std::string published_validation_table() {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : validate_published()) {
    const auto& c = *row.published;
    rows.push_back(
        {c.study, c.model, std::to_string(c.gpus),
         fmt::format("{} x {} ({})", c.gpus / c.gpus_per_node, c.gpus_per_node, c.inter_network),
         fmt::format("{:.1f}%", 100 * c.published_efficiency),
         fmt::format("{:.1f}%", 100 * row.predicted),
         fmt::format("{:+.1f}", 100 * (row.predicted - c.published_efficiency)),
         fmt::format("{:.1f}%", 100 * row.calibrated),
         fmt::format("{:+.1f}", 100 * (row.calibrated - c.published_efficiency)),
         row.calibration.overhead > 0
             ? fmt::format("overhead {:.1f} ms", row.calibration.overhead * 1e3)
             : fmt::format("overlap {:.2f}", row.calibration.overlap)});
  }
  return report::markdown_table({"study", "model", "GPUs", "network", "published", "predicted",
                                 "error", "calibrated", "error", "calibration (other cases)"},
                                "llrlrrrrrl", rows) +
         "\nPredicted: the network alone (no overlap, no overhead). Calibrated: one parameter "
         "from the study's other cases (leave one out). Inputs and sources: "
         "docs/scaling-model.md.\n";
}

}  // namespace scalebench::scaling
