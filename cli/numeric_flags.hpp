// Every numeric flag of the CLI goes through one of these CLI11 transforms, which read the text
// with the strict helper of util/numeric_option.hpp (finite, in range, never wrapped) and hand
// CLI11 the canonical text to store. A refused value exits 2 with CLI11's "--flag: expected ...,
// got "VALUE"" (the flag's name is CLI11's part of the message).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "util/numeric_option.hpp"

namespace scalebench::cli {

namespace detail {

template <typename Parse>
CLI::Validator strict_number(Parse parse, std::string description) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        try {
          text = parse(text);
          return {};
        } catch (const util::NumberError& error) {
          return error.what();
        }
      },
      std::move(description));
}

}  // namespace detail

// A finite real number in `range` (e.g. {0, 1, true, true} for a confidence level).
inline CLI::Validator real_in(util::NumberRange range) {
  return detail::strict_number(
      [range](const std::string& text) {
        util::parse_real(text, range);
        return text;
      },
      "NUMBER");
}

// A whole number in [min, max].
inline CLI::Validator integer_in(long long min, long long max) {
  return detail::strict_number(
      [min, max](const std::string& text) {
        return std::to_string(util::parse_integer(text, min, max));
      },
      "INT");
}

// A whole number of an unsigned type (a seed) in [min, max]: no sign.
inline CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max) {
  return detail::strict_number(
      [min, max](const std::string& text) {
        return std::to_string(util::parse_unsigned(text, min, max));
      },
      "UINT");
}

// A size in bytes with an optional unit (512MiB, 2GiB, 1000000), stored as bytes.
inline CLI::Validator size_in(std::uint64_t min, std::uint64_t max) {
  return detail::strict_number(
      [min, max](const std::string& text) {
        return std::to_string(util::parse_size(text, min, max));
      },
      "SIZE");
}

}  // namespace scalebench::cli
