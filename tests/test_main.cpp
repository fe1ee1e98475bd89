// doctest's main, plus a listener that knows the running test case, so that a skip can name it
// and a directly run binary ends with the list of what it skipped (test_support.hpp).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

std::string g_current_test;
std::vector<std::string> g_skipped;

struct SkipListener : doctest::IReporter {
  explicit SkipListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {
    if (g_skipped.empty()) return;
    std::printf("[scalebench] %zu test case(s) skipped:\n", g_skipped.size());
    for (const auto& line : g_skipped) std::printf("  %s\n", line.c_str());
    std::fflush(stdout);
  }
  void test_case_start(const doctest::TestCaseData& data) override { g_current_test = data.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

REGISTER_LISTENER("scalebench-skips", 1, SkipListener);

void scalebench::test::report_skip(const std::string& reason) {
  std::printf("SKIPPED: %s: %s\n", g_current_test.c_str(), reason.c_str());
  std::fflush(stdout);
  g_skipped.push_back(g_current_test + ": " + reason);
}
