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
// --memory-format channels_last (unverified on a GPU when written: none was lent).
TEST_CASE("cuda channels_last vs cpu: mnist_cnn") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: mobilenet_v2 at 3x32x32") {
  compare_model("mobilenet_v2", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last vs cpu: inception_v3 at 3x75x75") {
  compare_model("inception_v3", 3, 75, 2, 10, cuda::Precision::fp32, cuda::Layout::nhwc);
}
TEST_CASE("cuda channels_last bf16 vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16, cuda::Layout::nhwc);
}
// --conv-engine graph (unverified on a GPU when written: none was lent).
TEST_CASE("cuda conv graph API, channels_last vs cpu: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API, channels_last vs cpu: mobilenet_v2 at 3x32x32") {
  compare_model("mobilenet_v2", 3, 32, 4, 10, cuda::Precision::fp32, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API vs cpu: mnist_cnn (fused bias and ReLU)") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::fp32, cuda::Layout::nchw,
                cuda::ConvEngine::graph);
}
TEST_CASE("cuda conv graph API, channels_last bf16 vs cpu fp32: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16, cuda::Layout::nhwc,
                cuda::ConvEngine::graph);
}
// --activation-type bf16 (unverified on a GPU when written: none was lent).
TEST_CASE("cuda bf16 activations vs cpu fp32: mnist_cnn") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::bf16, cuda::Layout::nchw,
                cuda::ConvEngine::legacy, cuda::DType::bf16);
}
TEST_CASE("cuda bf16 activations, channels_last, graph API vs cpu fp32: resnet50 at 3x32x32") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16, cuda::Layout::nhwc,
                cuda::ConvEngine::graph, cuda::DType::bf16);
}
TEST_CASE("cuda bf16 activations, channels_last vs cpu fp32: inception_v3 at 3x75x75") {
  compare_model("inception_v3", 3, 75, 2, 10, cuda::Precision::bf16, cuda::Layout::nhwc,
                cuda::ConvEngine::legacy, cuda::DType::bf16);
}
TEST_CASE("cuda bf16 vs cpu fp32: mnist_cnn, within bf16's rounding") {
  compare_model("mnist_cnn", 1, 28, 8, 10, cuda::Precision::bf16);
}
TEST_CASE("cuda bf16 vs cpu fp32: resnet50 at 3x32x32, within bf16's rounding") {
  compare_model("resnet50", 3, 32, 4, 10, cuda::Precision::bf16);
}
