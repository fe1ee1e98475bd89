// Seeded random-input fuzzing run by ctest for a bounded time: random bytes and
// structure-aware mutations of real inputs (trainer lines, experiments/*.json), checked by the
// invariants of fuzz_targets.cpp. SCALEBENCH_FUZZ_SECONDS (default 8) and SCALEBENCH_FUZZ_SEED
// (default 16) change the budget and the sequence; a failure prints the seed and the input.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"
#include "test_support.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double budget_seconds() {
  const char* text = std::getenv("SCALEBENCH_FUZZ_SECONDS");
  return text ? std::strtod(text, nullptr) : 8.0;
}
std::uint64_t seed() {
  const char* text = std::getenv("SCALEBENCH_FUZZ_SEED");
  return text ? std::strtoull(text, nullptr, 10) : 16;
}

std::string escaped(const std::string& input) {
  std::string out;
  for (unsigned char c : input.substr(0, 2000)) {
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", c);
      out += buffer;
    }
  }
  return out;
}

// Mutations that keep much of an input's structure, so that inputs get past the first checks.
class Mutator {
 public:
  Mutator(std::uint64_t seed, std::vector<std::string> seeds, std::vector<std::string> dictionary)
      : random_(seed), seeds_(std::move(seeds)), dictionary_(std::move(dictionary)) {}

  std::string next() {
    if (pick(10) == 0) return random_bytes(pick(200));
    std::string input = seeds_[pick(seeds_.size())];
    const std::size_t rounds = 1 + pick(6);
    for (std::size_t i = 0; i < rounds; ++i) mutate(input);
    return input;
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : random_() % n; }
  std::string random_bytes(std::size_t n) {
    std::string out(n, '\0');
    for (auto& c : out) c = static_cast<char>(random_());
    return out;
  }
  const std::string& token() { return dictionary_[pick(dictionary_.size())]; }
  void mutate(std::string& input) {
    const std::size_t at = pick(input.size() + 1);
    switch (pick(9)) {
      case 0:  // flip a byte
        if (!input.empty()) input[pick(input.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // random byte
        if (!input.empty()) input[pick(input.size())] = static_cast<char>(random_());
        break;
      case 2:  // insert a token
      case 3:
        input.insert(at, token());
        break;
      case 4: {  // replace the value after a colon, or a number, by a token
        const auto colon = input.find_first_of(":,", at);
        if (colon == std::string::npos) break;
        const auto end = input.find_first_of(",}]", colon + 1);
        if (end == std::string::npos) break;
        input.replace(colon + 1, end - colon - 1, token());
        break;
      }
      case 5:  // delete a range
        input.erase(at, pick(16));
        break;
      case 6: {  // duplicate a range (repeated keys, deeper nesting)
        const auto length = pick(std::min<std::size_t>(64, input.size() - at + 1));
        input.insert(at, input.substr(at, length));
        break;
      }
      case 7: {  // splice another seed in
        const auto& other = seeds_[pick(seeds_.size())];
        const auto from = pick(other.size() + 1);
        input.insert(at, other.substr(from, pick(200)));
        break;
      }
      case 8:  // truncate
        input.resize(at);
        break;
    }
    if (input.size() > 64 * 1024) input.resize(64 * 1024);
  }

  std::mt19937_64 random_;
  std::vector<std::string> seeds_;
  std::vector<std::string> dictionary_;
};

template <class Target>
void run_fuzz(const char* name, Target target, Mutator mutator) {
  const double budget = budget_seconds();
  const auto start = Clock::now();
  std::size_t executions = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < budget) {
    for (int batch = 0; batch < 64; ++batch, ++executions) {
      const std::string input = mutator.next();
      try {
        target(input);
      } catch (const std::exception& error) {
        FAIL(std::string(name) << ": " << std::string(error.what()) << " (seed " << seed()
                               << ", execution " << executions << ")\ninput: \"" << escaped(input)
                               << "\"");
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE(std::string(name) << ": " << executions << " executions in " << seconds << " s (seed "
                            << seed() << ")");
  CHECK(executions > 0);
}

std::vector<std::string> experiment_seeds() {
  std::vector<std::string> seeds;
  for (const auto& entry :
       std::filesystem::directory_iterator(scalebench::test::source_dir() / "experiments")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream file(entry.path(), std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    seeds.push_back(text.str());
  }
  seeds.push_back(
      R"({"name":"c","repetitions":2,"timeout_seconds":5,"np":[1,2],"conditions":[)"
      R"({"name":"a","launcher":"command","command":["{program}","-n","{np}","{args}"],)"
      R"("env":{"OMP_NUM_THREADS":"1"}},{"name":"b","launcher":"srun","launcher_args":["x"]}]})");
  seeds.push_back(
      R"({"name":"f","repetitions":2,"np":[1,2],"order":"randomized","seed":3,)"
      R"("factors":{"m":["a",{"name":"b","env":{"X":"1"},"launcher_args":["-y"]}],"k":[1,2]},)"
      R"("exclude":[{"m":"b","np":1},{"condition":"s","k":[2]}],)"
      R"("conditions":[{"name":"s","launcher":"single"},{"name":"p","launcher":"mpirun"}]})");
  return seeds;
}

}  // namespace

TEST_CASE("the line parser keeps its invariants on random and mutated lines") {
  const std::vector<std::string> seeds = {
      "Epoch 1/5",
      "Epoch 3/3\r",
      "  Epoch 10/100  ",
      "[1,0]<stdout>:Epoch 1/2",
      "[ns@1,0]<stderr>: text",
      "[0]<stdout>:x",
      "Mon Nov 22 10:00:00 2026[0]<stdout>:Epoch 2/4",
      "3: Epoch 1/2",
      "12/12 - loss: 0.5 - accuracy: 0.8 - test_accuracy: 0.7 - images_per_second: 100 - "
      "epoch_seconds: 4.8",
      "scalebench-train model=mlp np=2 backend=cpu",
      "Training done: epochs=5 seconds=12.5",
      "# scalebench-train benchmark=allreduce transport=mpi np=2",
      "      1048576        262144   float     sum     123.456    8.4937    8.4937       0",
      "# Avg bus bandwidth    : 8.4937",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
      "a\nb\r\nc",
  };
  const std::vector<std::string> dictionary = {"Epoch ",
                                               "/",
                                               "0",
                                               "1",
                                               "-1",
                                               "2147483647",
                                               "99999999999",
                                               "1e308",
                                               "nan",
                                               "inf",
                                               "-0",
                                               "[",
                                               "]",
                                               "<stdout>",
                                               "<stderr>",
                                               ":",
                                               ",",
                                               "@",
                                               " ",
                                               "\t",
                                               "\r",
                                               "\n",
                                               "=",
                                               "#",
                                               " - ",
                                               "loss: ",
                                               "epoch_seconds: ",
                                               "Training done:",
                                               "scalebench-train ",
                                               "benchmark=",
                                               "# Avg bus bandwidth    : ",
                                               "float",
                                               "sum",
                                               "\xc3",
                                               "\xe2\x82",
                                               "\xed\xa0\x80",
                                               "\xf4\x90\x80\x80",
                                               "\xc0\x80",
                                               "\xef\xbf\xbd",
                                               "\xff"};
  run_fuzz("line parser", scalebench::fuzz::line_parser_target, Mutator(seed(), seeds, dictionary));
}

TEST_CASE("parse_experiment returns a bounded Experiment or throws ExperimentError") {
  const std::vector<std::string> dictionary = {"{",
                                               "}",
                                               "[",
                                               "]",
                                               "\"",
                                               ":",
                                               ",",
                                               "1e400",
                                               "-1e400",
                                               "0",
                                               "-1",
                                               "1.5",
                                               "9.3e9",
                                               "2592000",
                                               "18446744073709551615",
                                               "-9223372036854775809",
                                               "100000",
                                               "NaN",
                                               "true",
                                               "null",
                                               "\"\\u0000\"",
                                               "\"\\ud800\"",
                                               "\"{np}\"",
                                               "\"{program}\"",
                                               "\"{args}\"",
                                               "\"{{np}}\"",
                                               "\"{nope}\"",
                                               "\"x={args}\"",
                                               "\"env\":{\"\":\"x\"}",
                                               "\"env\":{\"A=B\":\"x\"}",
                                               "\"repetitions\":100000",
                                               "\"np\":[1,2,3,4,5,6,7,8]",
                                               "\"launcher\":\"command\"",
                                               "\"command\":[\"{program}\",\"{args}\"]",
                                               "\"timeout_seconds\":",
                                               "\"name\":\"x\",",
                                               "\"program\":\"{program}\"",
                                               "\"launcher_args\":[\"{np}\"]",
                                               "[[[[[[[[[[[[[[[[",
                                               "]]]]]]]]]]]]]]]]",
                                               "\xff",
                                               "\xc3\xa9",
                                               "\"trainer\":{\"\":1}",
                                               "\"args\":[\"a\",\"b\"]"};
  run_fuzz("experiment", scalebench::fuzz::experiment_target,
           Mutator(seed() + 1, experiment_seeds(), dictionary));
}
