#include "report/export/paper.hpp"

#include <fmt/format.h>

#include "report/export/markup.hpp"
#include "report/export/output_file.hpp"

namespace scalebench::report {
namespace {

// Breaks allowed after the separators of long values (hosts, paths, CPU names), so a provenance
// value never runs past its column.
std::string breakable_tex(std::string_view text) {
  std::string out;
  for (const char c : text) {
    out += tex(std::string_view(&c, 1));
    if (c == '/' || c == '_' || c == '.' || c == ',' || c == ';' || c == '=' || c == '-')
      out += "\\allowbreak{}";
  }
  return out;
}

std::string figure_tex(const PaperFigure& figure) {
  return fmt::format(
      "\\begin{{figure}}[htbp]\n\\centering\n\\includegraphics[width=\\linewidth]{{figures/{}}}\n"
      "\\caption{{{}}}\n\\label{{fig:{}}}\n\\end{{figure}}\n\n",
      figure.name, tex(figure.caption), figure.name);
}

// The inside of an HTML page's <body> (the exporters write whole pages); a fragment as it is.
std::string body_of(const std::string& page) {
  const auto open = page.find("<body>");
  const auto close = page.rfind("</body>");
  if (open == std::string::npos || close == std::string::npos || close < open) return page;
  return page.substr(open + 6, close - open - 6);
}

}  // namespace

std::string paper_main_tex(const PaperDocument& document) {
  std::string out;
  for (const auto& line : document.made_by) out += tex_comment(line);
  out +=
      "\\documentclass[10pt]{article}\n"
      "\\usepackage[textwidth=6.5in,vmargin=2.2cm]{geometry}\n"
      "\\usepackage{booktabs,dcolumn,array,graphicx,longtable}\n"
      "\\begin{document}\n";
  out += fmt::format("\\title{{{}}}\n\\date{{}}\n\\maketitle\n\n", tex(document.title));
  for (const auto& section : document.sections) {
    out += fmt::format("\\section{{{}}}\n\\label{{{}}}\n\n", tex(section.heading), section.label);
    for (const auto& table : section.tables)
      out += fmt::format("\\input{{tables/{}}}\n\n", table.name);
    for (const auto& figure : section.figures) out += figure_tex(figure);
    out += "\\clearpage\n\n";
  }
  out += "\\appendix\n\\section{Provenance}\n\\input{provenance}\n\n\\end{document}\n";
  return out;
}

std::string paper_provenance_tex(const PaperDocument& document) {
  std::string out = "% Where and with what the runs ran, and what made this document.\n";
  out += "\\noindent Made by:\n\\begin{itemize}\n";
  // Command lines in typewriter type, where "--" stays two hyphens and quotes stay straight;
  // ragged right, since a typewriter font's spaces do not stretch (\par ends the paragraph
  // inside the group, while \raggedright holds).
  for (const auto& line : document.made_by)
    out += fmt::format("\\item {{\\small\\ttfamily\\raggedright {}\\par}}\n", breakable_tex(line));
  out += "\\end{itemize}\n\n";
  for (const auto& [experiment, provenance] : document.provenance) {
    out += fmt::format("\\subsection*{{{}}}\n", tex(experiment));
    if (provenance.empty()) {
      out += "No provenance was stored with these runs (a database from before schema 6).\n\n";
      continue;
    }
    out +=
        "{\\footnotesize\n\\begin{longtable}{@{}l>{\\raggedright\\arraybackslash}p{0.72\\linewidth}"
        "@{}}\n";
    out += "\\toprule\nKey & Value \\\\\n\\midrule\n";
    for (const auto& [key, value] : provenance)
      out += fmt::format("{} & {} \\\\\n", breakable_tex(key), breakable_tex(value));
    out += "\\bottomrule\n\\end{longtable}}\n\n";
  }
  return out;
}

std::string paper_html(const PaperDocument& document) {
  std::string out = page_head(document.title);
  out += std::string(kPaperHtmlMark) + "\n";
  out += fmt::format("<h1>{}</h1>\n", html(document.title));
  for (const auto& section : document.sections) {
    out += fmt::format("<section id=\"{}\">\n<h1>{}</h1>\n", html(section.label),
                       html(section.heading));
    for (const auto& table : section.tables) out += body_of(table.html);
    for (const auto& figure : section.figures) {
      const auto block = figure_block(figure.svg, figure.caption);
      out += !block.empty() ? block
                            : fmt::format(
                                  "<figure><img src=\"figures/{}.png\" alt=\"\"><figcaption>{}"
                                  "</figcaption></figure>\n",
                                  html(figure.name), html(figure.caption));
    }
    out += "</section>\n";
  }
  out += "<section id=\"provenance\">\n<h1>Provenance</h1>\n<ul>\n";
  for (const auto& line : document.made_by) out += fmt::format("<li>{}</li>\n", html(line));
  out += "</ul>\n";
  for (const auto& [experiment, provenance] : document.provenance) {
    out += fmt::format("<h2>{}</h2>\n<table class=\"provenance\">\n", html(experiment));
    for (const auto& [key, value] : provenance)
      out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", html(key), html(value));
    out += "</table>\n";
  }
  return out + "</section>\n</body>\n</html>\n";
}

std::vector<std::filesystem::path> paper_files(const std::filesystem::path& directory,
                                               const PaperDocument& document) {
  std::vector<std::filesystem::path> files;
  for (const auto& section : document.sections)
    for (const auto& table : section.tables)
      files.push_back(directory / "tables" / (table.name + ".tex"));
  for (const auto* name : {"provenance.tex", "main.tex", "index.html"})
    files.push_back(directory / name);
  return files;
}

std::vector<std::filesystem::path> write_paper(const std::filesystem::path& directory,
                                               const PaperDocument& document) {
  std::filesystem::create_directories(directory / "tables");
  const auto files = paper_files(directory, document);
  std::vector<std::string> texts;
  for (const auto& section : document.sections)
    for (const auto& table : section.tables) texts.push_back(table.latex);
  texts.push_back(paper_provenance_tex(document));
  texts.push_back(paper_main_tex(document));
  texts.push_back(paper_html(document));
  for (std::size_t i = 0; i < files.size(); ++i) write_file_replacing(files[i], texts[i]);
  return files;
}

}  // namespace scalebench::report
