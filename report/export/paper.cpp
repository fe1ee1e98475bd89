#include "report/export/paper.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

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

// A figure at the size it was drawn (its text keeps its points): in two columns, one wider than a
// column spans both (figure*, at the top of a page); in one column, placed where it stands.
std::string figure_tex(const PaperFigure& figure, int columns) {
  const bool wide =
      columns == 2 && figure.width_in > (kTwoColumnTextInches - kColumnSepInches) / 2 + 1e-9;
  const std::string environment = wide ? "figure*" : "figure";
  return fmt::format(
      "\\begin{{{0}}}[{1}]\n\\centering\n\\includegraphics{{figures/{2}}}\n"
      "\\caption{{{3}}}\n\\label{{fig:{2}}}\n\\end{{{0}}}\n\n",
      environment,
      columns == 1 ? "H"
      : wide       ? "tp"
                   : "htbp",
      figure.name, tex(figure.caption));
}

// A section's tables and figures in reading order: each figure right after the table of its name
// (the report's figure after its table, the --by figure after Table 2), the rest at the end.
struct Part {
  const PaperTable* table = nullptr;
  const PaperFigure* figure = nullptr;
};
std::vector<Part> reading_order(const PaperSection& section) {
  std::vector<Part> parts;
  std::vector<bool> placed(section.figures.size(), false);
  for (const auto& table : section.tables) {
    parts.push_back({&table, nullptr});
    for (std::size_t f = 0; f < section.figures.size(); ++f)
      if (!placed[f] && section.figures[f].name == table.name) {
        parts.push_back({nullptr, &section.figures[f]});
        placed[f] = true;
      }
  }
  for (std::size_t f = 0; f < section.figures.size(); ++f)
    if (!placed[f]) parts.push_back({nullptr, &section.figures[f]});
  return parts;
}

// The study's setup as a methods section states it: a run-in paragraph, each item a sentence.
std::string setup_tex(const std::vector<std::pair<std::string, std::string>>& setup) {
  if (setup.empty()) return "";
  std::string out = "\\paragraph{Setup.}\n";
  for (const auto& [what, text] : setup)
    out += fmt::format("\\emph{{{}:}} {}.\n", tex(what), breakable_tex(text));
  return out + "\n";
}

std::string setup_html(const std::vector<std::pair<std::string, std::string>>& setup) {
  if (setup.empty()) return "";
  std::string out = "<dl class=\"setup\">\n";
  for (const auto& [what, text] : setup)
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", html(what), html(text));
  return out + "</dl>\n";
}

// The inside of an HTML page's <body> (the exporters write whole pages); a fragment as it is.
std::string body_of(const std::string& page) {
  const auto open = page.find("<body>");
  const auto close = page.rfind("</body>");
  if (open == std::string::npos || close == std::string::npos || close < open) return page;
  return page.substr(open + 6, close - open - 6);
}

}  // namespace

// The preamble's fonts: Latin Modern as pdflatex would use it, and a fallback, for the glyphs it
// lacks (Greek, arrows, CJK), to the first installed font that has them (a missing font would be
// a fatal error, so each is asked for only where it exists).
constexpr std::string_view kLuaLatexFonts =
    "\\usepackage{fontspec}\n"
    "\\def\\scalebenchfallback{}\n"
    "\\IfFontExistsTF{DejaVu Sans}{\\edef\\scalebenchfallback{\\scalebenchfallback"
    "\"DejaVu Sans:mode=harf;\",}}{}\n"
    "\\IfFontExistsTF{WenQuanYi Micro Hei}{\\edef\\scalebenchfallback{\\scalebenchfallback"
    "\"WenQuanYi Micro Hei:mode=harf;\",}}{}\n"
    "\\directlua{luaotfload.add_fallback(\"scalebench\", {\\scalebenchfallback})}\n"
    "\\setmainfont{Latin Modern Roman}[RawFeature={fallback=scalebench}]\n"
    "\\setsansfont{Latin Modern Sans}[RawFeature={fallback=scalebench}]\n"
    "\\setmonofont{Latin Modern Mono}[RawFeature={fallback=scalebench}]\n";

std::string paper_main_tex(const PaperDocument& document) {
  std::string out;
  for (std::size_t i = 0; i < document.made_by.size(); ++i) {
    out += tex_comment(i == 0 ? document.made_by[i] +
                                    ": compile with LuaLaTeX, `lualatex main.tex` (twice, for "
                                    "the references)"
                              : document.made_by[i]);
    if (i == 0) out += "% !TEX program = lualatex\n";
  }
  const bool two = document.columns == 2;
  out += two ? "\\documentclass[10pt,twocolumn]{article}\n" : "\\documentclass[10pt]{article}\n";
  out += kLuaLatexFonts;
  out += two ? fmt::format(
                   "\\usepackage[textwidth={:g}in,columnsep={:g}in,vmargin=2.2cm]{{geometry}}\n",
                   kTwoColumnTextInches, kColumnSepInches)
             : fmt::format("\\usepackage[textwidth={:g}in,vmargin=2.2cm]{{geometry}}\n",
                           kOneColumnTextInches);
  out +=
      "\\usepackage{booktabs,dcolumn,array,graphicx,longtable,float}\n"
      "\\begin{document}\n";
  out += fmt::format("\\title{{{}}}\n\\date{{}}\n\\maketitle\n\n", tex(document.title));
  for (const auto& section : document.sections) {
    out += fmt::format("\\section{{{}}}\n\\label{{{}}}\n\n", tex(section.heading), section.label);
    out += setup_tex(section.setup);
    for (const auto& part : reading_order(section))
      out += part.table ? fmt::format("\\input{{tables/{}}}\n\n", part.table->name)
                        : figure_tex(*part.figure, document.columns);
  }
  out += "\\clearpage\n\n";
  // The provenance table runs over pages (longtable), which needs one column.
  if (two) out += "\\onecolumn\n";
  out += "\\appendix\n\\section{Provenance}\n\\input{provenance}\n\n\\end{document}\n";
  return out;
}

std::string placed_table(const std::string& latex, int columns) {
  if (columns != 1) return latex;
  std::string out = latex;
  const auto replace_all = [&](std::string_view from, std::string_view to) {
    for (auto at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
      out.replace(at, from.size(), to);
  };
  for (const auto* placement : {"[tbp]", "[htbp]", "[t]", "[tp]"}) {
    replace_all(fmt::format("\\begin{{table*}}{}", placement), "\\begin{table}[H]");
    replace_all(fmt::format("\\begin{{table}}{}", placement), "\\begin{table}[H]");
  }
  replace_all("\\end{table*}", "\\end{table}");
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
    out += setup_html(section.setup);
    for (const auto& part : reading_order(section)) {
      if (part.table) {
        out += body_of(part.table->html);
        continue;
      }
      const auto& figure = *part.figure;
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
    for (const auto& table : section.tables)
      texts.push_back(placed_table(table.latex, document.columns));
  texts.push_back(paper_provenance_tex(document));
  texts.push_back(paper_main_tex(document));
  texts.push_back(paper_html(document));
  for (std::size_t i = 0; i < files.size(); ++i) write_file_replacing(files[i], texts[i]);
  return files;
}

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The manifest's entries; nullopt when there is none; throws when a file of that name is not one.
std::optional<std::set<std::string>> manifest_entries(const std::filesystem::path& directory) {
  const auto path = directory / kPaperManifest;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path))) return std::nullopt;
  const std::string text = std::filesystem::is_regular_file(std::filesystem::symlink_status(path))
                               ? read_file(path)
                               : std::string();
  if (text.rfind(std::string(kPaperManifestMark) + "\n", 0) != 0)
    throw ReportError(fmt::format(
        "{}: exists and was not written by scalebench paper; choose another -o", path.string()));
  std::set<std::string> entries;
  std::size_t at = kPaperManifestMark.size() + 1;
  while (at < text.size()) {
    const auto end = std::min(text.find('\n', at), text.size());
    if (end > at) entries.insert(text.substr(at, end - at));
    at = end + 1;
  }
  return entries;
}

// Of a bundle written before the manifest existed: is `file` one main.tex names (or main.tex and
// index.html themselves, by their marks)?
bool named_by_earlier_bundle(const std::filesystem::path& directory, const std::string& main_tex,
                             const std::string& file) {
  if (main_tex.rfind(kPaperTexMark, 0) != 0) return false;
  if (file == "main.tex") return true;
  if (file == "index.html")
    return read_file(directory / file).find(kPaperHtmlMark) != std::string::npos;
  const std::filesystem::path path(file);
  const std::string stem = (path.parent_path() / path.stem()).generic_string();
  if (file == "provenance.tex") return main_tex.find("\\input{provenance}") != std::string::npos;
  if (file.starts_with("tables/"))
    return main_tex.find("\\input{" + stem + "}") != std::string::npos;
  if (file.starts_with("figures/")) return main_tex.find("{" + stem + "}") != std::string::npos;
  return false;
}

}  // namespace

void refuse_foreign_files(const std::filesystem::path& directory,
                          const std::vector<std::string>& files) {
  const auto manifest = manifest_entries(directory);
  // Without a manifest, an earlier release's bundle is known by its main.tex: read once.
  const std::string main_tex = manifest ? std::string() : read_file(directory / "main.tex");
  for (const auto& file : files) {
    if (file == kPaperManifest) continue;  // checked by manifest_entries
    const auto path = directory / file;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path))) continue;
    const bool ours =
        manifest ? manifest->contains(file) : named_by_earlier_bundle(directory, main_tex, file);
    if (!ours)
      throw ReportError(fmt::format(
          "{}: exists and was not written by scalebench paper (not in {}); move it or choose "
          "another -o",
          path.string(), (directory / kPaperManifest).string()));
  }
}

void write_paper_manifest(const std::filesystem::path& directory,
                          const std::vector<std::string>& files) {
  std::set<std::string> entries = manifest_entries(directory).value_or(std::set<std::string>{});
  entries.insert(files.begin(), files.end());
  entries.erase(std::string(kPaperManifest));
  std::string text = std::string(kPaperManifestMark) + "\n";
  for (const auto& entry : entries) text += entry + "\n";
  std::filesystem::create_directories(directory);
  write_file_replacing(directory / kPaperManifest, text);
}

}  // namespace scalebench::report
