// The CUDA backend against the CPU backend on whole models of the zoo (small inputs), in every
// set-up: NCHW and channels last, the legacy and the graph API's convolutions, fp32, bf16
// arithmetic and bf16 activations (cross_backend_harness.hpp). Skipped where no GPU is present.
#include <doctest/doctest.h>

#include "cross_backend_harness.hpp"

using namespace cross_backend;

TEST_CASE("cuda vs cpu: mnist_cnn") { compare_model("mnist_cnn", 1, 28, 8, 10); }
TEST_CASE("cuda vs cpu: lenet5") { compare_model("lenet5", 1, 28, 8, 10); }
TEST_CASE("cuda vs cpu: resnet50 at 3x32x32") { compare_model("resnet50", 3, 32, 4, 10); }
TEST_CASE("cuda vs cpu: mobilenet_v2 at 3x32x32") { compare_model("mobilenet_v2", 3, 32, 4, 10); }
TEST_CASE("cuda vs cpu: inception_v3 at 3x75x75") { compare_model("inception_v3", 3, 75, 2, 10); }
TEST_CASE("cuda vs cpu: vgg16 at 3x32x32") { compare_model("vgg16", 3, 32, 2, 10); }
// Issue 33's set-ups, unverified on a GPU when written (none was lent): fp32 in channels last
// with either convolution API and NCHW with the graph API; bf16 arithmetic in channels last
// with the graph API, and bf16 activations (cross_backend_harness.hpp, new_*_setups). Each test
// runs the CPU reference once for all its set-ups; a failure names the set-up.
TEST_CASE("cuda issue-33 fp32 set-ups vs cpu: mnist_cnn") {
  compare_model("mnist_cnn", 1, 28, 8, 10, new_fp32_setups());
}
TEST_CASE("cuda issue-33 fp32 set-ups vs cpu: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, new_fp32_setups());
}
TEST_CASE("cuda issue-33 fp32 set-ups vs cpu: mobilenet_v2 at 3x32x32") {
  compare_model("mobilenet_v2", 3, 32, 4, 10, new_fp32_setups());
}
TEST_CASE("cuda issue-33 fp32 set-ups vs cpu: inception_v3 at 3x75x75") {
  compare_model("inception_v3", 3, 75, 2, 10, new_fp32_setups());
}
TEST_CASE("cuda issue-33 bf16 set-ups vs cpu fp32: mnist_cnn, within bf16's rounding") {
  compare_model("mnist_cnn", 1, 28, 8, 10, new_bf16_setups());
}
TEST_CASE("cuda issue-33 bf16 set-ups vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, new_bf16_setups());
}
TEST_CASE(
    "cuda issue-33 bf16 set-ups vs cpu fp32: inception_v3 at 3x75x75, within bf16's rounding") {
  compare_model("inception_v3", 3, 75, 2, 10, new_bf16_setups());
}
TEST_CASE("cuda bf16 vs cpu fp32: mnist_cnn, within bf16's rounding") {
  compare_model("mnist_cnn", 1, 28, 8, 10, {GpuSetup{cuda::Precision::bf16}});
}
TEST_CASE("cuda bf16 vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, {GpuSetup{cuda::Precision::bf16}});
}
