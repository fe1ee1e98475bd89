#include <doctest/doctest.h>

#include <string>

#include "plotting/report.hpp"

using namespace scalebench::plotting;

TEST_CASE("the registry knows markdown, csv and json") {
  CHECK(exporter_names() == std::vector<std::string>{"markdown", "csv", "json"});
  for (const auto& name : exporter_names()) CHECK(make_exporter(name) != nullptr);
}

TEST_CASE("an unknown format is an error that lists the known ones") {
  CHECK_THROWS_WITH_AS(make_exporter("html"),
                       "unknown report format 'html': known formats are markdown, csv, json",
                       ReportError);
}
