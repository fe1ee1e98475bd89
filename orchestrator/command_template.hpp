// The placeholders of a "command" argv template, shared by the experiment reader (which
// checks them) and the matrix expansion (which fills them in).
#pragma once

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string_view>

namespace scalebench::orchestrator {

// Placeholders of "command" elements: `{name}` with name of [a-z_]; `{{` and `}}` stand for
// literal braces. Substitution is one pass from left to right: substituted text is never scanned
// again, so a value containing `{program}` cannot recurse.
template <class Literal, class Named>
void scan_template(std::string_view text, Literal&& literal, Named&& named) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal(text.substr(i, 1));
      i += 2;
      continue;
    }
    if (c == '{') {
      std::size_t j = i + 1;
      while (j < text.size() &&
             (std::islower(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      if (j > i + 1 && j < text.size() && text[j] == '}') {
        named(text.substr(i + 1, j - i - 1));
        i = j + 1;
        continue;
      }
    }
    std::size_t next = text.find_first_of("{}", i + 1);
    if (next == std::string_view::npos) next = text.size();
    literal(text.substr(i, next - i));
    i = next;
  }
}

inline constexpr std::string_view kCommandPlaceholders[] = {"np", "program", "repetition",
                                                            "condition"};

inline bool is_command_placeholder(std::string_view name) {
  return std::find(std::begin(kCommandPlaceholders), std::end(kCommandPlaceholders), name) !=
         std::end(kCommandPlaceholders);
}

}  // namespace scalebench::orchestrator
