#include <doctest/doctest.h>

#include <string>

#include "report/analysis/report.hpp"
#include "report/export/exporters.hpp"

using namespace scalebench::report;

TEST_CASE("the registry knows markdown, csv, json, latex and html") {
  CHECK(exporter_names() == std::vector<std::string>{"markdown", "csv", "json", "latex", "html"});
  for (const auto& name : exporter_names()) CHECK(make_exporter(name) != nullptr);
}

TEST_CASE("an unknown format is an error that lists the known ones") {
  CHECK_THROWS_WITH_AS(
      make_exporter("tex"),
      "unknown report format 'tex': known formats are markdown, csv, json, latex, html",
      ReportError);
}
