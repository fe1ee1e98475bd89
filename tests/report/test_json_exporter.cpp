#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"
#include "sample_table.hpp"

using namespace scalebench;

TEST_CASE("JSON: stable keys, numbers as numbers, absent values as null") {
  auto table = test::sample_table();
  table.rows.erase(table.rows.begin(), table.rows.begin() + 3);  // keep "mpirun np=8"
  table.notes = {"one note"};
  const std::string expected = R"({
  "format_version": 2,
  "experiment": "mnist-cnn",
  "unit": "run",
  "confidence": 0.95,
  "base_label": "mpirun np=1",
  "rows": [
    {
      "label": "mpirun np=8",
      "condition": "mpirun",
      "launcher": "mpirun",
      "np": 8,
      "runs": 1,
      "epochs": 1,
      "mean_epoch_seconds": 0.0512,
      "sd_epoch_seconds": null,
      "tukey_p_vs_base": 2.766e-258,
      "images_per_second": null,
      "speedup_vs_base": 725.2,
      "scaling_efficiency": null,
      "is_base": false,
      "test_accuracy": null,
      "mean_ci": null,
      "speedup_ci": null,
      "images_per_second_ci": null,
      "scaling_efficiency_ci": null,
      "letters": null,
      "display_label": "mpirun np=8",
      "levels": {}
    }
  ],
  "anova": {
    "f": 1119.95,
    "df_between": 3.0,
    "df_within": 18.0,
    "p": 2.766e-258,
    "welch": false
  },
  "pairwise_test": "Tukey",
  "weak_scaling": false,
  "notes": [
    "one note"
  ],
  "provenance": {},
  "labels": {}
}
)";
  CHECK(report::make_exporter("json")->render(table) == expected);
}

TEST_CASE("JSON: no ANOVA is null, and the output parses back") {
  auto table = test::sample_table();
  table.anova.reset();
  const auto parsed = nlohmann::json::parse(report::make_exporter("json")->render(table));
  CHECK(parsed["anova"].is_null());
  CHECK(parsed["rows"].size() == 4);
  CHECK(parsed["rows"][1]["is_base"] == true);
  CHECK(parsed["rows"][1]["tukey_p_vs_base"].is_null());
  CHECK(parsed["rows"][0]["tukey_p_vs_base"].get<double>() == 3.2e-12);
}
