// The LaTeX exporter's tables (latex_exporter.cpp writes the float around them): numbers rounded
// to sensible figures with thin-space thousands separators, cells that dcolumn aligns at the
// decimal point, each value's interval in a row under it, and one tabular that sets one or several
// column blocks side by side (report --by) under spanning headers. Rules: docs/report.md, "latex".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/analysis/report.hpp"
#include "report/export/column_format.hpp"

namespace scalebench::report::latex {

// The decimals that give `value` `figures` significant figures (column_format.hpp).
using report::decimals_for;
// `value` with `decimals` decimals, the integer digits grouped by three with thin spaces ("\,")
// from five integer digits on (as siunitx does): "160\,938", "0.674", "-0.13". A minus is a
// plain '-': a minus sign in a math (dcolumn) cell; text_number makes it one in text.
std::string number(double value, int decimals);
// number() for text mode: a minus as "$-$".
std::string text_number(double value, int decimals);
// A p-value in a table cell or a sentence: "0.43", "0.0032" (two significant figures down to
// 0.001), "$3.20 \times 10^{-12}$" below, "$< 4.94 \times 10^{-324}$" for an underflowed 0.
std::string p_value(double p);

// Prose into LaTeX: tex() (markup.hpp), and besides command-line options in typewriter type
// ("--unit" as \texttt{-{}-unit}, never an en dash), "np=2" and "np = 2" as math with an italic
// np, and ">=" and "<=" as math relations.
std::string prose(std::string_view text);

// A column header: `text` (plain) wrapped at spaces onto lines of about 10 characters (a nested
// tabular), so the columns stay narrow.
std::string header(const std::string& text);

// One cell: a number for dcolumn, or text in its column's own alignment, and its interval.
struct Cell {
  std::string value;     // TeX: number() output when `aligned`, else text ("N.A.", letters, p)
  bool aligned = false;  // goes into the D column as is (digits, '.', "\,", a leading '-')
  std::string interval;  // TeX text, "[0.13, 2.86]"; empty: none
  std::string mark;      // plain letters set as a superscript after the value (Tukey letters)
};
inline Cell number_cell(std::string text) { return {std::move(text), true, {}, {}}; }
inline Cell text_cell(std::string text) { return {std::move(text), false, {}, {}}; }

// The cell of `row` in report column `key` (a TableColumns key) at its column's format
// (column_formats: one number of decimals per column; images/s at most four significant figures;
// efficiency and test accuracy in percent): the value for dcolumn, its interval at the same
// decimals under it. Thousands grouped by "\,".
Cell report_cell(const ReportRow& row, std::string_view key, const ColumnFormats& formats);

// A block of columns (the whole table, or one level of report --by).
struct Block {
  std::string title;                 // TeX over the block (\multicolumn, \cmidrule); empty: none
  std::vector<std::string> headers;  // TeX (header() for plain text), centred over the column
  std::vector<char> text_align;      // per column: 'l', 'c' or 'r' for the cells that are text
  std::vector<std::optional<std::vector<Cell>>> rows;  // per row label; absent: not in the block
  std::string footer;  // TeX across the block in a last row (its ANOVA); empty: none
};

// The tabular: `first_header` over the row labels (TeX), the blocks side by side, the intervals
// in \scriptsize rows under their values, the footers in a last row labelled `footer_label`.
std::string tabular(const std::string& first_header, const std::vector<std::string>& row_labels,
                    const std::vector<Block>& blocks, const std::string& footer_label);

}  // namespace scalebench::report::latex
