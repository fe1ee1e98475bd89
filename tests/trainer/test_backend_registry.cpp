// trainer/backend_registry.cpp: which backends exist, and what asking for others says.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "test_support.hpp"
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
  CHECK(cpu.make_model(ModelSpec{}, SgdOptions{}, BackendOptions{})->parameter_count() == 101770);
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

TEST_CASE("cuda: without a GPU, making a model fails with a clear error, not a crash") {
  const Backend* cuda = try_find_backend("cuda");
  if (cuda != nullptr && cuda->device_count() > 0) {
    SCALEBENCH_SKIP("a GPU is present (tests/cuda/ train on it)");
  }
  try {
    find_backend("cuda").make_model(ModelSpec{}, SgdOptions{}, BackendOptions{});
    FAIL("cuda training cannot work without a GPU");
  } catch (const BackendError& e) {
    const std::string message = e.what();
    MESSAGE("cuda compiled in: " << (cuda != nullptr) << "; " << message);
    CHECK(message.find(cuda != nullptr ? "no GPU found" : "not in this build") !=
          std::string::npos);
  }
}

TEST_CASE("cpu: --precision bf16 is refused with a message naming the cuda backend") {
  ModelSpec spec;
  BackendOptions options;
  options.precision = "bf16";
  try {
    find_backend("cpu").make_model(spec, SgdOptions{}, options);
    FAIL("the cpu backend has no bf16");
  } catch (const BackendError& e) {
    CHECK(std::string(e.what()).find("--backend cuda") != std::string::npos);
  }
  options.precision = "fp32";
  CHECK(find_backend("cpu").make_model(spec, SgdOptions{}, options)->parameter_count() > 0);
}
