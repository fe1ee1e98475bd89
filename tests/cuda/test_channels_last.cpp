// trainer/cuda/channels_last.*: the index arithmetic of N×H×W×C tensors and the reordering of
// convolution weights between the host's K×C×R×S and the device's K×R×S×C. Plain host code: runs
// without a GPU.
#include <doctest/doctest.h>

#include <numeric>
#include <set>
#include <vector>

#include "trainer/cuda/channels_last.hpp"
#include "trainer/model/parameters.hpp"

using namespace scalebench::trainer;

TEST_CASE("channels_last: every stored element maps to its own N×C×H×W index") {
  const std::uint64_t n = 2, c = 3, h = 2, w = 2, plane = h * w;
  // (n=1, h=0, w=1, c=2) is stored at ((1·2 + 0)·2 + 1)·3 + 2 = 17 and is NCHW element
  // ((1·3 + 2)·2 + 0)·2 + 1 = 21.
  CHECK(cuda::nchw_index_of_nhwc(17, c, plane) == 21);
  CHECK(cuda::nchw_index_of_nhwc(0, c, plane) == 0);
  CHECK(cuda::nchw_index_of_nhwc(1, c, plane) == plane);  // channel 1 of the first pixel
  std::set<std::uint64_t> seen;
  for (std::uint64_t p = 0; p < n * c * plane; ++p)
    seen.insert(cuda::nchw_index_of_nhwc(p, c, plane));
  CHECK(seen.size() == n * c * plane);  // a permutation
  CHECK(*seen.rbegin() == n * c * plane - 1);
  // One channel, or one pixel: the layouts are the same memory.
  for (std::uint64_t p = 0; p < 8; ++p) {
    CHECK(cuda::nchw_index_of_nhwc(p, 1, 8) == p);
    CHECK(cuda::nchw_index_of_nhwc(p, 8, 1) == p);
  }
}

TEST_CASE("channels_last: convolution weights go K×C×R×S -> K×R×S×C and back, the rest stays") {
  model::Graph g;
  const int conv = g.op(model::Graph::input, model::Conv2d{model::conv2d(3, 2, 2)});
  const int relu = g.op(conv, model::Eltwise{model::Activation::relu});
  const int flat = g.op(relu, model::Flatten{});
  g.op(flat, model::Dense{2, 2, model::Init::glorot});
  const std::vector<cuda::ConvWeights> blocks = cuda::conv_weight_blocks(g);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].offset == 0);
  CHECK(blocks[0].k == 2);
  CHECK(blocks[0].c == 3);
  CHECK(blocks[0].r == 2);
  CHECK(blocks[0].s == 2);
  const std::size_t total = model::parameter_layout(g).total;  // 24 weights, 2 biases, dense 6
  REQUIRE(total == 24 + 2 + 6);
  std::vector<float> flat_values(total);
  std::iota(flat_values.begin(), flat_values.end(), 0.0f);
  std::vector<float> moved = flat_values;
  cuda::weights_to_channels_last(moved, blocks);
  // (k=0, c=1, r=0, s=0) is K×C×R×S element 4 and K×R×S×C element 1; (k=1, c=2, r=1, s=1) is
  // element 23 in both.
  CHECK(moved[1] == 4.0f);
  CHECK(moved[23] == 23.0f);
  CHECK(moved[3] == 1.0f);  // (k=0, r=0, s=1, c=0) <- K×C×R×S element 1
  for (std::size_t i = 24; i < total; ++i) CHECK(moved[i] == flat_values[i]);  // bias, dense
  cuda::weights_from_channels_last(moved, blocks);
  CHECK(moved == flat_values);
}

TEST_CASE("channels_last: grouped convolutions reorder their C/g channels per filter") {
  model::Graph g;
  g.op(model::Graph::input, model::Conv2d{model::conv2d(4, 4, 3, 1, 1, 4)});  // depthwise
  const auto blocks = cuda::conv_weight_blocks(g);
  REQUIRE(blocks.size() == 1);
  CHECK(blocks[0].c == 1);
  std::vector<float> w(model::parameter_layout(g).total);
  std::iota(w.begin(), w.end(), 0.0f);
  const std::vector<float> before = w;
  cuda::weights_to_channels_last(w, blocks);
  CHECK(w == before);  // one channel per filter: K×1×R×S is K×R×S×1
}

TEST_CASE("channels_last: a block past the buffer is refused") {
  std::vector<float> w(10);
  CHECK_THROWS_AS(cuda::weights_to_channels_last(w, {cuda::ConvWeights{4, 1, 2, 2, 2}}),
                  std::out_of_range);
}
