#include "util/text.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace scalebench::util {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code = lead & 0x07u;
  } else {
    return {0, 0};  // a continuation byte, C0/C1 (always overlong) or F5..FF
  }
  if (i + length > text.size()) return {0, 0};
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0u) != 0x80u) return {0, 0};
    code = (code << 6) | (next & 0x3Fu);
  }
  if ((length == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
      (length == 4 && (code < 0x10000 || code > 0x10FFFF))) {
    return {0, 0};
  }
  return {code, length};
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto length = decode_utf8(text, i).second;
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

bool is_valid_utf8(std::string_view text) { return !first_invalid_utf8(text); }

std::string repair_utf8(std::string_view text) {
  // Valid runs are copied whole: this is on the line reader's path (one call per output line).
  std::string out;
  out.reserve(text.size() + 8);
  std::size_t run = 0;  // start of the current valid run
  for (std::size_t i = 0; i < text.size();) {
    const auto length = decode_utf8(text, i).second;
    if (length != 0) {
      i += length;
      continue;
    }
    out.append(text.substr(run, i - run));
    out += "\xEF\xBF\xBD";
    run = ++i;
  }
  out.append(text.substr(run));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string alnum_or_dash(std::string_view text) {
  std::string out;
  for (const char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  // A typo is two edits (a swap) or a third of the word, and never more than three edits.
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(2, word.size() / 3));
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const auto distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& arg : words) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

std::string count_of(long long count, std::string_view noun) {
  std::string out = std::to_string(count) + " ";
  out += noun;
  if (count != 1) out += "s";
  return out;
}

namespace {

// C1 controls and the bidirectional embeddings, overrides and isolates.
bool is_terminal_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

// "\\x1b" for a byte, "\\u202e" for a code point: `digits` lowercase hex digits after `prefix`.
void append_escape(std::string& out, const char* prefix, std::uint32_t value, int digits) {
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out += "0123456789abcdef"[(value >> shift) & 0xF];
}

}  // namespace

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7F) {
      append_escape(out, "\\x", byte, 2);
      ++i;
      continue;
    }
    const auto [cp, n] = decode_utf8(text, i);
    if (n == 0) {
      append_escape(out, "\\x", byte, 2);
      ++i;
    } else if (is_terminal_control(cp)) {
      append_escape(out, "\\u", cp, 4);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace scalebench::util
