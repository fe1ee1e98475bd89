#include <doctest/doctest.h>

#include "util/text.hpp"

using namespace scalebench;

TEST_CASE("trim drops ASCII white space at both ends only") {
  CHECK(util::trim("  a b\t\r\n") == "a b");
  CHECK(util::trim("\f\va\v") == "a");
  CHECK(util::trim("   ").empty());
  CHECK(util::trim("").empty());
  CHECK(util::trim("\xC2\xA0x") == "\xC2\xA0x");  // U+00A0 is not ASCII space: kept
}

TEST_CASE("decode_utf8: code point and length, or {0, 0} for what RFC 3629 forbids") {
  using Decoded = std::pair<std::uint32_t, std::size_t>;
  CHECK(util::decode_utf8("A", 0) == Decoded{0x41, 1});
  CHECK(util::decode_utf8("\xC3\xA9", 0) == Decoded{0xE9, 2});
  CHECK(util::decode_utf8("\xE2\x82\xAC", 0) == Decoded{0x20AC, 3});
  CHECK(util::decode_utf8("\xF0\x9F\x98\x80", 0) == Decoded{0x1F600, 4});
  CHECK(util::decode_utf8("\xC0\xAF", 0) == Decoded{0, 0});          // overlong '/'
  CHECK(util::decode_utf8("\xE0\x80\xAF", 0) == Decoded{0, 0});      // overlong, 3 bytes
  CHECK(util::decode_utf8("\xED\xA0\x80", 0) == Decoded{0, 0});      // surrogate U+D800
  CHECK(util::decode_utf8("\xF4\x90\x80\x80", 0) == Decoded{0, 0});  // past U+10FFFF
  CHECK(util::decode_utf8("\xE2\x82", 0) == Decoded{0, 0});          // truncated
  CHECK(util::decode_utf8("\x80", 0) == Decoded{0, 0});              // lone continuation
}

TEST_CASE("repair_utf8: one U+FFFD per bad byte, valid text unchanged") {
  const std::string valid = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  CHECK(util::is_valid_utf8(valid));
  CHECK(util::repair_utf8(valid) == valid);
  CHECK(
      !util::is_valid_utf8("a\xFF"
                           "b"));
  CHECK(util::repair_utf8("a\xFF"
                          "b") ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(util::repair_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(util::repair_utf8(std::string("\0x", 2)) == std::string("\0x", 2));  // NUL is valid UTF-8
  CHECK(util::is_valid_utf8(""));
}

TEST_CASE("closest_match suggests a typo's target, never a different word") {
  const std::vector<std::string> commands{"run", "report", "plot", "stats", "query", "help"};
  CHECK(util::closest_match("reprot", commands) == "report");
  CHECK(util::closest_match("stat", commands) == "stats");
  CHECK(util::closest_match("qeury", commands) == "query");
  CHECK(!util::closest_match("benchmark", commands));
  CHECK(!util::closest_match("x", {}));
  CHECK(util::edit_distance("kitten", "sitting") == 3);
  CHECK(util::edit_distance("", "abc") == 3);
}

TEST_CASE("count_of: a count with its noun, singular for one") {
  CHECK(scalebench::util::count_of(1, "cell") == "1 cell");
  CHECK(scalebench::util::count_of(0, "cell") == "0 cells");
  CHECK(scalebench::util::count_of(12, "run") == "12 runs");
}
