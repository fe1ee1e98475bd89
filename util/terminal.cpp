#include "util/terminal.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "util/text.hpp"

namespace scalebench::util {
namespace {

constexpr std::string_view kBlank = " ";

// The screen line being drawn: one code point per cell, as views into the source text.
class Line {
 public:
  void put(std::string_view cell) {
    if (cursor_ < cells_.size())
      cells_[cursor_] = cell;
    else {
      cells_.resize(cursor_, kBlank);  // after a cursor move past the end
      cells_.push_back(cell);
    }
    ++cursor_;
  }
  void carriage_return() { cursor_ = 0; }
  void back(std::size_t n) { cursor_ -= std::min(cursor_, n); }
  void forward(std::size_t n) { cursor_ = std::min<std::size_t>(cursor_ + n, 1 << 20); }
  void column(std::size_t n) { cursor_ = std::min<std::size_t>(n, 1 << 20); }
  void tab() { column((cursor_ / 8 + 1) * 8); }
  // ESC [ n K: 0 from the cursor to the end, 1 from the start to the cursor, 2 the whole line.
  void erase(int mode) {
    if (mode == 0 && cursor_ < cells_.size()) cells_.resize(cursor_);
    if (mode == 1)
      std::fill(cells_.begin(),
                cells_.begin() + static_cast<std::ptrdiff_t>(std::min(cursor_ + 1, cells_.size())),
                kBlank);
    if (mode == 2) cells_.clear();
  }
  std::string text() const {
    std::size_t end = cells_.size();
    while (end > 0 && cells_[end - 1] == kBlank) --end;
    std::string out;
    for (std::size_t i = 0; i < end; ++i) out += cells_[i];
    return out;
  }

 private:
  std::vector<std::string_view> cells_;
  std::size_t cursor_ = 0;
};

// The numeric parameter of a CSI sequence (its first one), or `fallback` when none is given.
std::size_t parameter(std::string_view parameters, std::size_t fallback) {
  std::size_t value = 0;
  bool any = false;
  for (char c : parameters) {
    if (c < '0' || c > '9') break;
    value = std::min<std::size_t>(value * 10 + static_cast<std::size_t>(c - '0'), 1 << 20);
    any = true;
  }
  return any ? value : fallback;
}

// Applies the escape sequence at text[i] (text[i] == ESC); returns the index after it.
std::size_t escape(std::string_view text, std::size_t i, Line& line) {
  if (i + 1 >= text.size()) return text.size();
  const char kind = text[i + 1];
  if (kind == '[') {  // CSI: parameters 0x30-0x3F, intermediates 0x20-0x2F, final 0x40-0x7E
    std::size_t j = i + 2;
    while (j < text.size() && text[j] >= 0x30 && text[j] <= 0x3F) ++j;
    const auto parameters = text.substr(i + 2, j - (i + 2));
    while (j < text.size() && text[j] >= 0x20 && text[j] <= 0x2F) ++j;
    if (j >= text.size()) return text.size();
    switch (text[j]) {
      case 'K':
        line.erase(static_cast<int>(parameter(parameters, 0)));
        break;
      case 'G':
        line.column(std::max<std::size_t>(parameter(parameters, 1), 1) - 1);
        break;
      case 'C':
        line.forward(parameter(parameters, 1));
        break;
      case 'D':
        line.back(parameter(parameters, 1));
        break;
      default:
        break;  // colours (m) and everything that leaves this line's text alone
    }
    return j + 1;
  }
  if (kind == ']' || kind == 'P' || kind == '_' || kind == '^') {
    // OSC / DCS / APC / PM strings: up to BEL or ST (ESC \).
    for (std::size_t j = i + 2; j < text.size(); ++j) {
      if (text[j] == '\a') return j + 1;
      if (text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\') return j + 2;
    }
    return text.size();
  }
  return i + 2;  // a two-byte escape (ESC 7, ESC =, ...)
}

}  // namespace

bool needs_terminal_view(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7F;
  });
}

std::string terminal_view(std::string_view text) {
  Line line;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\x1b') {
      i = escape(text, i, line);
    } else if (c == '\r') {
      line.carriage_return(), ++i;
    } else if (c == '\b') {
      line.back(1), ++i;
    } else if (c == '\t') {
      line.tab(), ++i;
    } else if (c < 0x20 || c == 0x7F) {
      ++i;  // other controls print nothing
    } else {
      const std::size_t length = std::max<std::size_t>(1, decode_utf8(text, i).second);
      line.put(text.substr(i, length));
      i += length;
    }
  }
  return line.text();
}

}  // namespace scalebench::util
