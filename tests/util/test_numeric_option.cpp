// The one strict reader of numbers from the command line (util/numeric_option.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "util/numeric_option.hpp"

using namespace scalebench::util;

namespace {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const NumberError& error) {
    return error.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("parse_real: finite, whole text, in range: nan, inf, junk and out of range refused") {
  CHECK(parse_real("0.25", {0, 1}) == 0.25);
  CHECK(parse_real("1e3") == 1000);
  CHECK(parse_real("-2.5", {-3, 0}) == -2.5);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity", "1e999", "", " 1", "1 ", "1x",
                          "0x10", "+1", "--1"})
    CHECK_MESSAGE(error_of([&] { parse_real(bad, {0, 1e9}); }) != "<no error>", bad);
  CHECK(error_of([] {
          parse_real("nan", {0, 1e9, true, false});
        }) == "expected a finite number in (0, 1e+09], got \"nan\"");
  CHECK(error_of([] {
          parse_real("-1", {0, 1e9, true, false});
        }) == "expected a number in (0, 1e+09], got \"-1\"");
  CHECK(error_of([] {
          parse_real("0", {0, 1e9, true, false});
        }) == "expected a number in (0, 1e+09], got \"0\"");
  CHECK(error_of([] {
          parse_real("1", {0, 1, true, true});
        }) == "expected a number in (0, 1), got \"1\"");
  CHECK(error_of([] {
          parse_real("x\x1b[2J", {0, 1});
        }) == "expected a number in [0, 1], got \"x\\x1B[2J\"");
}

TEST_CASE("parse_integer and parse_unsigned: no wrap, no fraction, in range") {
  CHECK(parse_integer("42", 0, 100) == 42);
  CHECK(parse_integer("-5", -10, 10) == -5);
  CHECK(error_of([] { parse_integer("-5", 0, 100); }) ==
        "expected a whole number in [0, 100], got \"-5\"");
  for (const char* bad : {"1.5", "1e3", "99999999999999999999", "", "nan", "0x1", " 3"})
    CHECK_MESSAGE(error_of([&] { parse_integer(bad, 0, 1'000'000); }) != "<no error>", bad);
  CHECK(parse_unsigned("18446744073709551615", 0, UINT64_MAX) == UINT64_MAX);
  CHECK(error_of([] { parse_unsigned("-1", 0, UINT64_MAX); }) != "<no error>");
  CHECK(error_of([] { parse_unsigned("18446744073709551616", 0, UINT64_MAX); }) != "<no error>");
}

TEST_CASE("parse_size: units of 1024, no negative size, no overflow") {
  CHECK(parse_size("512", 1, UINT64_MAX) == 512);
  CHECK(parse_size("1MiB", 1, UINT64_MAX) == 1ULL << 20);
  CHECK(parse_size("2gib", 1, UINT64_MAX) == 2ULL << 30);
  CHECK(parse_size("3KB", 1, UINT64_MAX) == 3 * 1024);
  CHECK(error_of([] { parse_size("-5", 1, UINT64_MAX); }).find("got \"-5\"") != std::string::npos);
  for (const char* bad : {"", "MiB", "1.5GiB", "nan", "inf", "5 MiB", "5XB", "99999999999TiB", "0"})
    CHECK_MESSAGE(error_of([&] { parse_size(bad, 1, 1ULL << 50); }) != "<no error>", bad);
}
