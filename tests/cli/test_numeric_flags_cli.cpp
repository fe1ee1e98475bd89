// Issue 23, item 6c: every numeric flag is read strictly (util/numeric_option.hpp through
// cli/numeric_flags.hpp): `query --max-memory -5` no longer wraps to 2^64 - 5, and nan, inf and
// negative values are refused with the flag's name and the value, exit 2.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_support.hpp"

using scalebench::test::invoke;

namespace {

// The parse error of `args` (exit 2, the flag and the value named), or what happened instead.
std::string refusal(const std::vector<std::string>& args, const std::string& flag,
                    const std::string& value) {
  const auto result = invoke(args);
  if (result.status != 2) return "exit " + std::to_string(result.status) + ": " + result.err;
  if (result.err.find(flag) == std::string::npos) return "no flag in: " + result.err;
  if (result.err.find("\"" + value + "\"") == std::string::npos)
    return "no value in: " + result.err;
  return "refused";
}

}  // namespace

TEST_CASE("numeric flags refuse nan, inf, negative and wrapped values, naming flag and value") {
  scalebench::test::TempDir dir;
  const auto db = (dir / "r.db").string();  // never opened: the options are refused first
  const auto query = [&](const std::string& flag, const std::string& value) {
    return refusal({"query", "--db", db, flag, value, "SELECT 1"}, flag, value);
  };
  CHECK(query("--max-memory", "-5") == "refused");
  CHECK(query("--max-memory", "1.5GiB") == "refused");
  for (const char* value : {"nan", "-1", "inf", "0", "1e999"})
    CHECK_MESSAGE(query("--timeout", value) == "refused", value);
  for (const char* value : {"-1", "0", "nan", "2.5"})
    CHECK_MESSAGE(query("--max-rows", value) == "refused", value);

  const auto compare = [&](const std::string& flag, const std::string& value) {
    return refusal({"compare", "--db", db, flag, value}, flag, value);
  };
  for (const char* value : {"nan", "-1", "inf"}) {
    CHECK_MESSAGE(compare("--fail-if-slower", value) == "refused", value);
    CHECK_MESSAGE(compare("--threshold", value) == "refused", value);
    CHECK_MESSAGE(compare("--confidence", value) == "refused", value);
  }
  CHECK(compare("--skip-epochs", "-1") == "refused");

  const auto model = [&](const std::string& flag, const std::string& value) {
    return refusal({"model", "--db", db, flag, value}, flag, value);
  };
  for (const char* value : {"nan", "inf", "-1"}) {
    CHECK_MESSAGE(model("--images-per-second", value) == "refused", value);
    CHECK_MESSAGE(model("--overlap", value) == "refused", value);
    CHECK_MESSAGE(model("--level", value) == "refused", value);
    CHECK_MESSAGE(model("--parameters", value) == "refused", value);
    CHECK_MESSAGE(model("--overhead-ms", value) == "refused", value);
    CHECK_MESSAGE(model("--fusion-mb", value) == "refused", value);
  }
  CHECK(model("--seed", "-1") == "refused");
  CHECK(model("--train-images", "-1") == "refused");
  CHECK(model("--bootstrap", "1e9") == "refused");
  CHECK(refusal({"stats", "--db", db, "--confidence", "nan"}, "--confidence", "nan") == "refused");
  CHECK(refusal({"run", "x.json", "--db", db, "--retries", "-1"}, "--retries", "-1") == "refused");
  CHECK(refusal({"run", "x.json", "--db", db, "--max-runs", "-1"}, "--max-runs", "-1") ==
        "refused");

  // The message as a user reads it.
  const auto memory = invoke({"query", "--db", db, "--max-memory", "-5", "SELECT 1"});
  CHECK(memory.err.find("--max-memory: expected a size in bytes in [1, 1125899906842624]") !=
        std::string::npos);

  // Good values still pass through to the command (here: a missing database).
  const auto good = invoke({"query", "--db", db, "--timeout", "2.5", "--max-rows", "10",
                            "--max-memory", "64MiB", "SELECT 1"});
  CHECK(good.status == 1);
}
