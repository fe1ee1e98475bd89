#include "report/export/latex_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "report/export/format.hpp"
#include "report/export/markup.hpp"
#include "report/export/table_cells.hpp"

namespace scalebench::report {
namespace {

// One character of text into LaTeX (tex() and latex::prose share it): `open_quote` carries the
// straight double quotes' state, `previous` the character before ("--" stays two hyphens).
void tex_char(std::string& out, char c, char previous, bool& open_quote) {
  switch (c) {
    case '"':
      out += open_quote ? "``" : "''";
      open_quote = !open_quote;
      return;
    case '\\':
      out += "\\textbackslash{}";
      return;
    case '{':
    case '}':
    case '$':
    case '&':
    case '#':
    case '_':
    case '%':
      out += '\\';
      out += c;
      return;
    case '^':
      out += "\\textasciicircum{}";
      return;
    case '~':
      out += "\\textasciitilde{}";
      return;
    case '<':
    case '>':
    case '|':
      out += fmt::format("${}$", c);
      return;
    case '-':
      // "--" and "---" would be set as dashes: a name's hyphens stay hyphens.
      out += previous == '-' ? "{}-" : "-";
      return;
    case '`':
      // A backtick would be an opening quote, and ?` !` the Spanish marks: a grave accent.
      out += "\\textasciigrave{}";
      return;
    case '\'':
    case ',':
      // '' and ,, would be set as closing and low double quotes: each stays itself.
      if (previous == c) out += "{}";
      out += c;
      return;
    default:
      if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F)
        out += c;
      else if (c == '\n' || c == '\t')
        out += ' ';
  }
}

}  // namespace

std::string tex_comment(std::string_view text) {
  std::string out = "% ";
  for (const char c : text) out += static_cast<unsigned char>(c) >= 0x20 && c != 0x7F ? c : ' ';
  return out + "\n";
}

// Text into LaTeX: the ten special characters escaped, control characters dropped, "<", ">" and
// "|" (which T1-less OT1 fonts print as other glyphs) as math, and "--" kept as two hyphens.
std::string tex(std::string_view text) {
  std::string out;
  bool open_quote = true;  // straight double quotes become TeX's opening and closing quotes
  char previous = 0;
  for (const char c : text) {
    tex_char(out, c, previous, open_quote);
    previous = c;
  }
  return out;
}

namespace latex {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// At `at`: "--name" (an option: a letter after the dashes, no word character before them).
std::size_t option_length(std::string_view text, std::size_t at) {
  if (text.substr(at, 2) != "--" || at + 2 >= text.size()) return 0;
  if (at > 0 && (word_char(text[at - 1]) || text[at - 1] == '-')) return 0;
  if (!std::islower(static_cast<unsigned char>(text[at + 2]))) return 0;
  std::size_t end = at + 2;
  while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                               (text[end] == '-' && end + 1 < text.size() &&
                                std::isalnum(static_cast<unsigned char>(text[end + 1])))))
    ++end;
  return end - at;
}

// At `at`: "np=2" or "np = 2" as a word, or the word "np" alone; sets `digits` to the number
// (empty for the word alone).
std::size_t np_length(std::string_view text, std::size_t at, std::string_view& digits) {
  if (text.substr(at, 2) != "np" || (at > 0 && word_char(text[at - 1]))) return 0;
  std::size_t end = at + 2;
  if (end < text.size() && (word_char(text[end]) || text[end] == '-')) return 0;
  digits = {};
  const auto word = end - at;
  if (end < text.size() && text[end] == ' ') ++end;
  if (end >= text.size() || text[end] != '=') return word;
  ++end;
  if (end < text.size() && text[end] == ' ') ++end;
  const std::size_t first = end;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == first || (end < text.size() && word_char(text[end]))) return word;
  digits = text.substr(first, end - first);
  return end - at;
}

// A value of column `format` and its interval, both at the column's decimals (the bounds of
// images/s rounded at the value's place).
Cell measured(double value, const std::optional<double>& lower, const std::optional<double>& upper,
              const ColumnFormat& format) {
  if (!std::isfinite(value * format.scale)) return text_cell(std::string(kNotAvailable));
  Cell cell = number_cell(column_number(value, format, "\\,"));
  const auto bound = [&](double b) {
    const auto text = column_number(b, format, "\\,", value);
    return text.starts_with('-') ? "$-$" + text.substr(1) : text;
  };
  if (lower && upper && std::isfinite(*lower) && std::isfinite(*upper))
    cell.interval = fmt::format("[{}, {}]", bound(*lower), bound(*upper));
  return cell;
}

Cell not_available() { return text_cell(std::string(kNotAvailable)); }

// dcolumn's D{.}{.}{a.b} for the numbers of a column: a digit widths before the point (a thin
// space is a third of a digit, a minus sign 1.6 digits), b digits after; text when none is a
// number. Too small a width would let a number run into its neighbour.
std::string column_spec(const std::vector<const Cell*>& cells, char text_align) {
  double left = 0, right = 0;
  bool any = false;
  for (const auto* cell : cells) {
    if (!cell->aligned) continue;
    any = true;
    const auto& text = cell->value;
    const auto point = std::min(text.find('.'), text.size());
    double width = 0;
    for (std::size_t i = 0; i < point; ++i)
      if (std::isdigit(static_cast<unsigned char>(text[i])))
        width += 1;
      else if (text[i] == '-')
        width += 1.6;
      else if (text[i] == ',')
        width += 0.34;  // "\,"; its backslash counts nothing
    left = std::max(left, width);
    // A superscript letter is at most 1.2 digits wide ("m" in a script size), with a little space.
    const double mark = cell->mark.empty() ? 0 : 0.3 + 1.2 * static_cast<double>(cell->mark.size());
    right = std::max(right, (point < text.size() ? text.size() - point - 1 : 0) + mark);
  }
  if (!any) return std::string(1, text_align);
  return fmt::format("D{{.}}{{.}}{{{}.{}}}", static_cast<int>(std::ceil(left - 1e-9)),
                     static_cast<int>(std::ceil(right - 1e-9)));
}

// A number as it is; text in an aligned column centred (dcolumn sets its cells in math).
std::string body_cell(const Cell& cell, bool aligned_column) {
  if (cell.aligned) return cell.value + (cell.mark.empty() ? "" : "^{\\mathrm{" + cell.mark + "}}");
  const auto text = cell.value + (cell.mark.empty() ? "" : "$^{\\mathrm{" + cell.mark + "}}$");
  return aligned_column ? fmt::format("\\multicolumn{{1}}{{c}}{{{}}}", text) : text;
}

// "\\" ends a row; a following "[" would be read as its optional length.
std::string row_start(const std::string& label) {
  return label.starts_with("[") ? "{}" + label : label;
}

}  // namespace

std::string number(double value, int decimals) {
  return column_number(value, ColumnFormat{std::max(0, decimals), 0, 1}, "\\,");
}

std::string text_number(double value, int decimals) {
  auto text = number(value, decimals);
  return text.starts_with('-') ? "$-$" + text.substr(1) : text;
}

std::string p_value(double p) {
  if (std::isnan(p)) return std::string(kNotAvailable);
  const auto scientific = [](double value) {
    const auto text = fmt::format("{:.2e}", value);  // 3.20e-12
    const auto e = text.find('e');
    return fmt::format("{} \\times 10^{{{}}}", text.substr(0, e), std::stoi(text.substr(e + 1)));
  };
  if (p <= 0) return fmt::format("$< {}$", scientific(std::numeric_limits<double>::denorm_min()));
  if (p >= 0.001) return fmt::format("{:#.2g}", p);
  return fmt::format("${}$", scientific(p));
}

std::string prose(std::string_view text) {
  std::string out;
  bool open_quote = true;
  char previous = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::string_view digits;
    if (const auto n = option_length(text, at)) {
      out += "\\texttt{-{}-" + tex(text.substr(at + 2, n - 2)) + "}";
      at += n;
    } else if (const auto m = np_length(text, at, digits)) {
      out += digits.empty() ? "$\\mathit{np}$" : fmt::format("$\\mathit{{np}} = {}$", digits);
      at += m;
    } else if (text.substr(at, 2) == ">=" || text.substr(at, 2) == "<=") {
      out += text[at] == '>' ? "$\\geq$" : "$\\leq$";
      at += 2;
    } else {
      tex_char(out, text[at], previous, open_quote);
      ++at;
    }
    previous = text[at - 1];
  }
  return out;
}

std::string header(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const auto word = text.substr(start, space - start);
    if (!line.empty() && line.size() + 1 + word.size() > 10) {
      lines.push_back(prose(line));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(prose(line));
  if (lines.size() == 1) return lines[0];
  // A nested tabular (stock LaTeX, no makecell); "\\{}" ends a line: a bare "\\" would read a
  // following "[" as its optional length.
  std::string out = "\\begin{tabular}[b]{@{}c@{}}";
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\\\\{}" : "") + lines[i];
  return out + "\\end{tabular}";
}

Cell report_cell(const ReportRow& row, std::string_view key, const ColumnFormats& formats) {
  const auto& format = format_of(formats, key);
  if (key == "epoch_time")
    return measured(row.mean_epoch_seconds, row.mean_ci_lower, row.mean_ci_upper, format);
  if (key == "sd")
    return row.sd_epoch_seconds
               ? measured(*row.sd_epoch_seconds, std::nullopt, std::nullopt, format)
               : not_available();
  if (key == "tukey")
    return text_cell(row.is_base || !row.tukey_p_vs_base ? std::string(kNotAvailable)
                                                         : p_value(*row.tukey_p_vs_base));
  if (key == "letters")
    return text_cell(row.letters ? tex(*row.letters) : std::string(kNotAvailable));
  if (key == "stop") return text_cell(stop_cell(row, "$\\pm$", "$^{\\dagger}$", "\\%"));
  if (key == "images_per_second")
    return row.images_per_second
               ? measured(*row.images_per_second, row.images_ci_lower, row.images_ci_upper, format)
               : not_available();
  if (key == "speedup")
    return row.speedup_vs_base
               ? measured(*row.speedup_vs_base, row.speedup_ci_lower, row.speedup_ci_upper, format)
               : not_available();
  if (key == "efficiency")
    return row.scaling_efficiency ? measured(*row.scaling_efficiency, row.efficiency_ci_lower,
                                             row.efficiency_ci_upper, format)
                                  : not_available();
  if (key == "test_accuracy")
    return row.mean_test_accuracy
               ? measured(*row.mean_test_accuracy, std::nullopt, std::nullopt, format)
               : not_available();
  return not_available();
}

std::string tabular(const std::string& first_header, const std::vector<std::string>& row_labels,
                    const std::vector<Block>& blocks, const std::string& footer_label) {
  // The column specs, from each column's cells.
  std::string spec = "@{}l";
  std::vector<std::vector<bool>> aligned(blocks.size());
  bool titles = false, footers = false;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto& block = blocks[b];
    titles = titles || !block.title.empty();
    footers = footers || !block.footer.empty();
    for (std::size_t c = 0; c < block.headers.size(); ++c) {
      std::vector<const Cell*> cells;
      for (const auto& row : block.rows)
        if (row) cells.push_back(&(*row)[c]);
      const auto column = column_spec(cells, block.text_align[c]);
      aligned[b].push_back(column.size() > 1);
      spec += column;
    }
  }
  std::string out = fmt::format("\\begin{{tabular}}{{{}@{{}}}}\n\\toprule\n", spec);
  if (titles) {
    std::string rules;
    std::size_t first = 2;
    for (const auto& block : blocks) {
      const auto width = block.headers.size();
      out += fmt::format(" & \\multicolumn{{{}}}{{c}}{{{}}}", width, block.title);
      rules += fmt::format("\\cmidrule(lr){{{}-{}}}", first, first + width - 1);
      first += width;
    }
    out += " \\\\\n" + rules + "\n";
  }
  out += first_header;
  for (const auto& block : blocks)
    for (const auto& header : block.headers)
      out += fmt::format(" & \\multicolumn{{1}}{{c}}{{{}}}", header);
  out += " \\\\\n\\midrule\n";
  for (std::size_t r = 0; r < row_labels.size(); ++r) {
    std::string values = row_start(row_labels[r]), intervals;
    bool any_interval = false;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const auto& block = blocks[b];
      for (std::size_t c = 0; c < block.headers.size(); ++c) {
        const auto& row = block.rows[r];
        values += " & " + (row ? body_cell((*row)[c], aligned[b][c])
                               : std::string("\\multicolumn{1}{c}{---}"));
        intervals += " &";
        if (row && !(*row)[c].interval.empty()) {
          intervals +=
              fmt::format(" \\multicolumn{{1}}{{c}}{{\\scriptsize {}}}", (*row)[c].interval);
          any_interval = true;
        }
      }
    }
    out += values + " \\\\\n";
    if (any_interval) out += intervals + " \\\\\n";
    // A little space after a value's interval, so that each row's two lines read as one.
    if (any_interval && r + 1 < row_labels.size()) out += "\\addlinespace[2pt]\n";
  }
  if (footers) {
    out += "\\midrule\n" + row_start(footer_label);
    for (const auto& block : blocks)
      out += fmt::format(" & \\multicolumn{{{}}}{{c}}{{{}}}", block.headers.size(), block.footer);
    out += " \\\\\n";
  }
  return out + "\\bottomrule\n\\end{tabular}";
}

}  // namespace latex
}  // namespace scalebench::report
