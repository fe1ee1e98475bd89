// Small text helpers every module needs: trimming, UTF-8 checking and repair, "did you mean".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace scalebench::util {

// Without leading and trailing ASCII white space (space, \t, \r, \n, \f, \v).
std::string_view trim(std::string_view text);

// The code point of the well-formed UTF-8 sequence at text[i] and its length in bytes, or
// {0, 0} when none starts there (overlong forms, surrogates and code points past U+10FFFF are
// not well-formed; RFC 3629, section 4). Requires i < text.size().
std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view text, std::size_t i);
bool is_valid_utf8(std::string_view text);
// The byte offset of the first byte that does not start a well-formed sequence, if any.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);
// Each byte that does not start a well-formed sequence becomes U+FFFD (the W3C/WHATWG
// "maximal subpart" practice, one replacement per bad byte); valid text comes back unchanged.
std::string repair_utf8(std::string_view text);

// `text` with every character that could move the cursor, recolour or retitle a terminal shown
// as a visible escape: C0 controls (tab and newline included) and DEL as \x1b, C1 controls
// (U+0080..U+009F) and the bidirectional overrides (U+202A..U+202E, U+2066..U+2069) as \u009b,
// and bytes that are not UTF-8 as \xff. Everything else, backslashes included, is kept.
std::string escape_controls(std::string_view text);

// The words as one POSIX shell command line: each plain word (letters, digits, _-./=:,+@%) as
// it is, any other single-quoted with a quote inside as '\''. For humans and for copy-paste.
std::string shell_join(const std::vector<std::string>& words);

// "1 cell", "2 cells", "0 cells": a count with its noun (a regular English plural, + "s").
std::string count_of(long long count, std::string_view noun);

// `text` with every character but an ASCII letter or digit as '-': a name as a file stem or a
// LaTeX label takes it (no spaces, dots, control sequences).
std::string alnum_or_dash(std::string_view text);

// Levenshtein distance.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The closest candidate within a distance that still looks like a typo, if any.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace scalebench::util
