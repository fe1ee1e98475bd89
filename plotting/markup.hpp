// Text into the markup languages the exporters write, shared by the report's and the scaling
// model's exporters.
#pragma once

#include <string>
#include <string_view>

namespace scalebench::plotting {

// Text into LaTeX: the ten special characters escaped, control characters dropped, and "<", ">"
// and "|" (which T1-less OT1 fonts print as other glyphs) as math. Defined in latex_exporter.cpp.
std::string tex(std::string_view text);
// Text into HTML: the five markup characters as entities, control characters dropped. Defined in
// html_exporter.cpp.
std::string html(std::string_view text);
// The SVG element of a gnuplot file, for inline use in a page (prolog and scripts removed).
std::string inline_svg(const std::string& svg);

}  // namespace scalebench::plotting
