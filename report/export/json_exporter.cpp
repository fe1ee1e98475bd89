#include "report/export/exporters.hpp"
#include "report/export/json.hpp"

namespace scalebench::report {
namespace {

// Bumped when a key is renamed or removed (adding keys does not bump it).
constexpr int kJsonFormatVersion = 2;  // 2: unit "run" by default, confidence intervals

Json provenance_object(const Provenance& provenance) {
  Json out = Json::object();
  for (const auto& [key, value] : provenance) out[key] = value;
  return out;
}

Json labels_object(const Labels& labels) {
  Json out = Json::object();
  for (const auto& [key, text] : labels.text) out[key] = text;
  return out;
}

}  // namespace

namespace {

// [lower, upper], or null where there is no interval.
Json interval(const std::optional<double>& lower, const std::optional<double>& upper) {
  if (!lower || !upper) return nullptr;
  return Json::array({*lower, *upper});
}

Json table_json(const ReportTable& table) {
  Json rows = Json::array();
  for (const auto& row : table.rows) {
    rows.push_back(Json{
        {"label", row.label},
        {"condition", row.condition},
        {"launcher", row.launcher},
        {"np", row.np},
        {"runs", row.runs},
        {"epochs", row.epochs},
        {"mean_epoch_seconds", row.mean_epoch_seconds},
        {"sd_epoch_seconds", optional_number(row.sd_epoch_seconds)},
        {"tukey_p_vs_base", optional_number(row.tukey_p_vs_base)},
        {"images_per_second", optional_number(row.images_per_second)},
        {"speedup_vs_base", optional_number(row.speedup_vs_base)},
        {"scaling_efficiency", optional_number(row.scaling_efficiency)},
        {"is_base", row.is_base},
        {"test_accuracy", optional_number(row.mean_test_accuracy)},
        {"mean_ci", interval(row.mean_ci_lower, row.mean_ci_upper)},
        {"speedup_ci", interval(row.speedup_ci_lower, row.speedup_ci_upper)},
        {"images_per_second_ci", interval(row.images_ci_lower, row.images_ci_upper)},
        {"scaling_efficiency_ci", interval(row.efficiency_ci_lower, row.efficiency_ci_upper)},
        {"letters", row.letters ? Json(*row.letters) : Json(nullptr)},
        {"display_label", display_label(row, table.labels)},
        {"levels",
         [&] {
           Json levels = Json::object();
           for (const auto& [factor, level] : row.levels) levels[factor] = level;
           return levels;
         }()},
    });
    // Precision-driven repetitions only: why the cell stopped (a table without keeps its keys).
    if (row.stop_reason) {
      rows.back()["stop_reason"] = *row.stop_reason;
      rows.back()["stop_relative_half_width"] = optional_number(row.stop_relative_half_width);
      rows.back()["stop"] = row.stop_text;
    }
  }
  Json anova = nullptr;
  if (table.anova) {
    anova = {{"f", table.anova->f},
             {"df_between", table.anova->df_between},
             {"df_within", table.anova->df_within},
             {"p", table.anova->p},
             {"welch", table.anova->welch}};
  }
  return {
      {"format_version", kJsonFormatVersion},
      {"experiment", table.experiment},
      {"unit", table.unit},
      {"confidence", table.confidence},
      {"base_label", table.base_label},
      {"rows", rows},
      {"anova", anova},
      {"pairwise_test", table.pairwise},
      {"weak_scaling", table.weak_scaling},
      {"notes", table.notes},
      {"provenance", provenance_object(table.provenance)},
      {"labels", labels_object(table.labels)},
  };
}

}  // namespace

std::string JsonExporter::render(const ReportTable& table) const {
  return dump_json(table_json(table));  // F = inf is written as null
}

std::string JsonExporter::render(const FactorReport& report) const {
  Json blocks = Json::array();
  for (std::size_t b = 0; b < report.blocks.size(); ++b) {
    Json block = table_json(report.blocks[b]);
    block.erase("format_version");
    block.erase("experiment");
    block["level"] = report.levels[b];
    blocks.push_back(std::move(block));
  }
  Json two_way = Json::array();
  for (const auto& anova : report.two_way) {
    Json terms = Json::array();
    for (const auto& term : anova.terms)
      terms.push_back({{"term", term.term},
                       {"df", term.df},
                       {"ss", term.ss},
                       {"ms", term.ms},
                       {"f", optional_number(term.f)},
                       {"p", optional_number(term.p)},
                       {"partial_eta_sq", optional_number(term.partial_eta_sq)}});
    two_way.push_back({{"scope", anova.scope},
                       {"model", anova.model},
                       {"ss_type", anova.ss_type},
                       {"observations", anova.observations},
                       {"terms", terms}});
  }
  Json bandwidth = Json::array();
  for (const auto& row : report.bandwidth)
    bandwidth.push_back({{"level", row.level},
                         {"condition", row.condition},
                         {"launcher", row.launcher},
                         {"np", row.np},
                         {"bytes", row.bytes},
                         {"busbw_gbs", row.busbw_gbs},
                         {"time_us", row.time_us},
                         {"avg_busbw_gbs", row.avg_busbw_gbs},
                         {"runs", row.runs}});
  return dump_json({
      {"format_version", kJsonFormatVersion},
      {"experiment", report.experiment},
      {"by", report.factor},
      {"unit", report.unit},
      {"weak_scaling", report.weak_scaling},
      {"levels", report.levels},
      {"row_keys", report.row_keys},
      {"blocks", blocks},
      {"two_way", two_way},
      {"bandwidth", bandwidth},
      {"notes", report.notes},
      {"provenance", provenance_object(report.provenance)},
      {"labels", labels_object(report.labels)},
  });
}

}  // namespace scalebench::report
