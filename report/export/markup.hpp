// Text into the markup languages the exporters write, and the HTML page's pieces, shared by the
// report's and the scaling model's exporters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace scalebench::report {

// Text into LaTeX: the ten special characters escaped, control characters dropped, "<", ">" and
// "|" (which T1-less OT1 fonts print as other glyphs) as math, and "--" as two hyphens ("-{}-",
// never a dash). Defined in latex_table.cpp (latex_table.hpp: prose, for sentences).
std::string tex(std::string_view text);
// "% text\n": a LaTeX comment line (control characters, line breaks included, as spaces: LaTeX
// ignores the comment up to its line end). Defined in latex_table.cpp.
std::string tex_comment(std::string_view text);
// Text into HTML: the five markup characters as entities, control characters dropped. Defined in
// html_exporter.cpp.
std::string html(std::string_view text);
// The SVG element of a gnuplot file, for inline use in a page (prolog and scripts removed).
std::string inline_svg(const std::string& svg);

// The opening of a self-contained HTML page (doctype, title, the reports' inline CSS, <body>).
std::string page_head(const std::string& title);
// "<h2>Notes</h2>" and a list of `notes`, escaped; empty for none.
std::string notes_list(const std::vector<std::string>& notes);
// A <figure> with the SVG inline and its caption; empty when `svg` holds no <svg> element.
std::string figure_block(const std::string& svg, const std::string& caption);

// Text for one Markdown table cell: a pipe escaped, line breaks as spaces. Defined in
// markdown_exporter.cpp.
std::string markdown_cell(std::string_view text);

}  // namespace scalebench::report
