// trainer/backend_registry.cpp: which backends exist, and what asking for others says.
#include <doctest/doctest.h>

#include <string>

#include "trainer/backend_registry.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;

TEST_CASE("cpu is always there and comes first") {
  const auto names = available_backends();
  REQUIRE_FALSE(names.empty());
  CHECK(names.front() == "cpu");
  const Backend& cpu = find_backend("cpu");
  CHECK(cpu.name() == "cpu");
  CHECK(cpu.device_count() == 1);
  CHECK(cpu.description().find("oneDNN") != std::string::npos);
  std::vector<float> x = {1, 2, 3};
  cpu.scale(x, 2.0f);
  CHECK(x == std::vector<float>{2, 4, 6});
  CHECK(cpu.make_model(ModelSpec{}, SgdOptions{})->parameter_count() == 101770);
}

TEST_CASE("an unknown backend is an error listing the available ones") {
  CHECK(try_find_backend("tpu") == nullptr);
  try {
    find_backend("tpu");
    FAIL("no error");
  } catch (const BackendError& e) {
    CHECK(std::string(e.what()).find("'tpu'") != std::string::npos);
    CHECK(std::string(e.what()).find("cpu") != std::string::npos);
  }
}

TEST_CASE("cuda: either not compiled in, or not implemented yet for training") {
  try {
    find_backend("cuda").make_model(ModelSpec{}, SgdOptions{});
    FAIL("cuda training should not work yet");
  } catch (const BackendError& e) {
    const std::string message = e.what();
    const bool compiled = try_find_backend("cuda") != nullptr;
    MESSAGE("cuda compiled in: " << compiled << "; " << message);
    CHECK(message.find(compiled ? "not implemented yet for training" : "not in this build") !=
          std::string::npos);
  }
}
