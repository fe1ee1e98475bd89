#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "report/export/format.hpp"

using namespace scalebench::report;

TEST_CASE(
    "p-values: two significant digits down to 0.001, then scientific with three, never clipped") {
  CHECK(format_p_value(0.43) == "p=0.43");
  CHECK(format_p_value(1.0) == "p=1.0");
  CHECK(format_p_value(0.1) == "p=0.10");
  CHECK(format_p_value(0.0499) == "p=0.050");
  CHECK(format_p_value(0.0012) == "p=0.0012");
  CHECK(format_p_value(0.001) == "p=0.0010");
  CHECK(format_p_value(0.000999) == "p=9.99e-04");
  CHECK(format_p_value(3.2e-12) == "p=3.20e-12");
  CHECK(format_p_value(2.766e-258) == "p=2.77e-258");
  CHECK(format_p_value(0.0) == "p<4.94e-324");
  CHECK(format_p_value(std::nan("")) == "N.A.");
}

TEST_CASE("measures: two decimals from 1 up, three significant digits below") {
  CHECK(format_measure(29.77) == "29.77");
  CHECK(format_measure(1.0) == "1.00");
  CHECK(format_measure(1234.5678) == "1234.57");
  CHECK(format_measure(0.0512) == "0.0512");
  CHECK(format_measure(0.5) == "0.500");
  CHECK(format_measure(0.0) == "0.00");
}

TEST_CASE("ratios, percentages and exact numbers") {
  CHECK(format_ratio(1.7) == "1.70");
  CHECK(format_percent(0.8512) == "85.1%");
  CHECK(format_percent(1.0) == "100.0%");
  CHECK(format_exact(0.1) == "0.1");
  CHECK(format_exact(294.94117647058823) == "294.94117647058823");
  CHECK(format_exact(2.766e-258) == "2.766e-258");
  CHECK(format_exact(std::numeric_limits<double>::infinity()) == "inf");
}
