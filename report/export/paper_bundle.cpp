// `paper`'s bundle as one step: the checks that keep a user's files and the database safe, all
// before the first write, then the files in an order a kill half-way can recover from.
#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <set>

#include "report/error.hpp"
#include "report/export/output_file.hpp"
#include "report/export/paper.hpp"
#include "util/text.hpp"

namespace scalebench::report {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Every file of the bundle, relative to its directory: the manifest, the figures' files, the
// tables, provenance.tex, main.tex and index.html.
std::vector<std::string> bundle_files(const fs::path& dir, const PaperDocument& document,
                                      const std::vector<PaperFigureJob>& figures) {
  std::vector<std::string> files{std::string(kPaperManifest)};
  for (const auto& figure : figures)
    files.insert(files.end(), figure.files.begin(), figure.files.end());
  for (const auto& path : paper_files(dir, document))
    files.push_back(path.lexically_relative(dir).generic_string());
  return files;
}

void check_paper_directory(const fs::path& dir, const PaperDocument& document,
                           const std::vector<PaperFigureJob>& figures) {
  const auto status = fs::symlink_status(dir);
  if (fs::exists(status) && !fs::is_directory(status))
    throw ReportError(
        fmt::format("-o {}: not a directory (paper writes a directory of files)", dir.string()));
  for (const auto* sub : {"tables", "figures"})
    if (fs::is_symlink(fs::symlink_status(dir / sub)))
      throw ReportError(fmt::format(
          "{}: a symbolic link; paper writes only into directories it can see are its own",
          (dir / sub).string()));
  std::set<std::string> names;
  const auto claim = [&](const std::string& name) {
    if (!names.insert(name).second)
      throw ReportError(fmt::format(
          "two parts of the paper would both be written as {}: rename an experiment (file "
          "names keep only its letters and digits)",
          name));
  };
  for (const auto& section : document.sections)
    for (const auto& table : section.tables) claim("tables/" + table.name + ".tex");
  for (const auto& figure : figures) claim("figures/" + figure.name + ".*");
  refuse_foreign_files(dir, bundle_files(dir, document, figures));
}

}  // namespace

std::string paper_file_stem(std::string_view name) {
  const auto out = util::alnum_or_dash(name);
  // A leading '-' would read as an option to gnuplot and other tools ("_base", ".x").
  const auto first = out.find_first_not_of('-');
  return first == std::string::npos ? std::string("experiment") : out.substr(first);
}

void write_paper_bundle(const fs::path& dir, PaperDocument& document,
                        const std::vector<PaperFigureJob>& figures, const std::string& database) {
  check_paper_directory(dir, document, figures);
  for (const auto& path : paper_files(dir, document)) refuse_database_output(path, database);
  for (const auto& figure : figures)
    for (const auto& file : figure.files) refuse_database_output(dir / file, database);
  // Listed before the first is written: a kill half-way leaves files the next run knows as its own.
  write_paper_manifest(dir, bundle_files(dir, document, figures));
  for (const auto& figure : figures) {
    const auto svg = figure.draw(dir / "figures" / figure.name);
    document.sections[figure.section].figures.push_back(
        {figure.name, figure.caption, read_text(svg), figure.width_in});
  }
  write_paper(dir, document);
}

}  // namespace scalebench::report
