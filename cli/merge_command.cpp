#include "cli/merge_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <filesystem>

#include "db/database.hpp"
#include "db/merge.hpp"
#include "report/export/output_file.hpp"

namespace scalebench::cli {
namespace {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// A private copy of `source` (and its -wal, where a writer left one): opening a database of an
// older schema migrates it, and the side file stays as the run left it.
fs::path private_copy(const std::string& source, const fs::path& directory) {
  if (!fs::is_regular_file(source))
    throw db::DatabaseError(fmt::format("{}: no such database file", source));
  // An empty file would become an empty database in the copy, and "merged 0 runs" a success.
  if (fs::file_size(source) == 0)
    throw db::DatabaseError(
        fmt::format("{}: an empty file, not a scalebench database (nothing merged)", source));
  const fs::path copy = directory / "side.db";
  fs::copy_file(source, copy);
  fs::last_write_time(copy, fs::last_write_time(source));  // its age, as a reader judges it
  if (fs::is_regular_file(source + "-wal")) fs::copy_file(source + "-wal", copy.string() + "-wal");
  return copy;
}

}  // namespace

void declare_merge_options(CLI::App& app, MergeCommand& options) {
  app.add_option("sources", options.sources,
                 "Side files (<db>.unsaved/*.db) or other scalebench databases")
      ->required();
  app.add_option("--into", options.into, "The results database that takes their runs")->required();
  app.add_flag("--skip-duplicates", options.skip_duplicates,
               "Skip runs the database already holds instead of refusing the file");
}

int merge_command(const MergeCommand& options, std::ostream& out, std::ostream&) {
  for (const auto& source : options.sources) {
    if (same_file(source, options.into))
      throw db::DatabaseError(fmt::format("{}: is the database to merge into", source));
  }
  auto into = db::Database::open(options.into);
  for (const auto& source : options.sources) {
    const report::PrivateTempDir work(fs::temp_directory_path());
    const std::string copy = private_copy(source, work.path()).string();
    // Errors name the user's file, not the private copy (gone when they read the message).
    const auto named = [&](const db::DatabaseError& error) {
      std::string text = error.what();
      for (auto at = text.find(copy); at != std::string::npos; at = text.find(copy, at))
        text.replace(at, copy.size(), source);
      return db::DatabaseError(text);
    };
    db::MergeOutcome merged;
    try {
      const auto side = db::Database::open(copy, db::OpenMode::ReadOnly);
      merged = db::merge_database(into, side, source, options.skip_duplicates);
    } catch (const db::DuplicateRunError&) {
      throw;
    } catch (const db::DatabaseError& error) {
      throw named(error);
    }
    fmt::print(
        out, "{}: merged {} into {}{}{}\n", source,
        merged.runs == 1 ? std::string("1 run") : fmt::format("{} runs", merged.runs), options.into,
        merged.instances_created > 0
            ? fmt::format(" ({} instance{} new there)", merged.instances_created,
                          merged.instances_created == 1 ? "" : "s")
            : "",
        merged.skipped.empty() ? ""
                               : fmt::format("; {} already there, skipped", merged.skipped.size()));
    for (const auto& skipped : merged.skipped) fmt::print(out, "  {}\n", skipped);
  }
  return 0;
}

}  // namespace scalebench::cli
