#include "plotting/exporters.hpp"
#include "plotting/json.hpp"

namespace scalebench::plotting {
namespace {

// Bumped when a key is renamed or removed (adding keys does not bump it).
constexpr int kJsonFormatVersion = 1;

}  // namespace

std::string JsonExporter::render(const ReportTable& table) const {
  Json rows = Json::array();
  for (const auto& row : table.rows) {
    rows.push_back({
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
    });
  }
  Json anova = nullptr;
  if (table.anova) {
    anova = {{"f", table.anova->f},
             {"df_between", table.anova->df_between},
             {"df_within", table.anova->df_within},
             {"p", table.anova->p}};
  }
  const Json document = {
      {"format_version", kJsonFormatVersion},
      {"experiment", table.experiment},
      {"unit", table.unit},
      {"base_label", table.base_label},
      {"rows", rows},
      {"anova", anova},
      {"notes", table.notes},
  };
  return dump_json(document);  // F = inf is written as null
}

}  // namespace scalebench::plotting
