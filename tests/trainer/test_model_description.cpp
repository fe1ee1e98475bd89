// trainer/model: the backend-neutral description. Its parameter layout and initial values are the
// CPU network's exactly (so a backend that lowers model::Graph starts where the CPU starts), and
// the dropout rule is the one the CPU layer applies.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "trainer/cpu/models.hpp"
#include "trainer/model/backward.hpp"
#include "trainer/model/dropout_mask.hpp"
#include "trainer/model/parameters.hpp"
#include "trainer/model/shapes.hpp"
#include "trainer/model/zoo.hpp"

using namespace scalebench::trainer;

namespace {

ModelSpec small(const std::string& name, int channels, int side, int classes) {
  ModelSpec spec;
  spec.name = name;
  spec.channels = channels;
  spec.height = spec.width = side;
  spec.input_size = static_cast<std::size_t>(channels * side * side);
  spec.classes = classes;
  spec.seed = 7;
  return spec;
}

}  // namespace

TEST_CASE("model::initial_parameters are the CPU network's, bit for bit, for every model") {
  for (const auto& spec :
       {small("mlp", 1, 28, 10), small("mnist_cnn", 1, 28, 10), small("lenet5", 1, 28, 10),
        small("vgg16", 3, 32, 10), small("resnet50", 3, 32, 10), small("mobilenet_v2", 3, 32, 10),
        small("inception_v3", 3, 75, 10)}) {
    INFO(spec.name);
    const auto description = model::describe_model(spec);
    const auto expected = model::initial_parameters(description.graph, spec.seed);
    auto network = cpu::make_model(spec, {});
    const auto actual = network->parameters();
    REQUIRE(actual.size() == expected.size());
    CHECK(std::memcmp(actual.data(), expected.data(), expected.size() * sizeof(float)) == 0);
    CHECK(model::parameter_layout(description.graph).total == network->parameter_count());
  }
}

TEST_CASE("model::op_name names each operation as the CPU layer's kind") {
  const auto description = model::describe_model(small("mnist_cnn", 1, 28, 10));
  const auto network = cpu::make_model(small("mnist_cnn", 1, 28, 10), {});
  const auto layers = network->layers();
  std::size_t layer = 0;
  for (const auto& node : description.graph.nodes()) {
    if (node.kind != model::Node::Kind::op) continue;
    REQUIRE(layer < layers.size());
    CHECK(model::op_name(node.op) == layers[layer++]->kind());
  }
  CHECK(layer == layers.size());
}

TEST_CASE("the dropout rule: the key of call k, the threshold, the kept share") {
  CHECK(model::dropout_threshold(0.5f) == 8388608u);
  CHECK(model::dropout_threshold(0.25f) == 4194304u);
  const std::uint64_t key = model::dropout_mask_key(42, 3);
  CHECK(key == model::splitmix64(42 ^ model::splitmix64(3)));
  std::size_t kept = 0;
  for (std::uint64_t i = 0; i < 100000; ++i)
    kept += model::dropout_keeps(key, i, model::dropout_threshold(0.25f)) ? 1 : 0;
  CHECK(kept > 74000);  // about 75% kept at rate 0.25
  CHECK(kept < 76000);
}

TEST_CASE("shape inference: mnist_cnn's shapes, every model ends at its classes") {
  const auto description = model::describe_model(small("mnist_cnn", 1, 28, 10));
  const auto shapes = model::infer_shapes(description.graph, description.input);
  CHECK(shapes[1] == model::Shape{32, 26, 26});
  CHECK(shapes[2] == model::Shape{64, 24, 24});
  CHECK(shapes[3] == model::Shape{64, 12, 12});
  CHECK(shapes[5] == model::Shape{9216});  // the flatten, the first dense layer's width
  for (const auto& spec : {small("mlp", 1, 28, 10), small("lenet5", 1, 28, 10),
                           small("vgg16", 3, 32, 7), small("resnet50", 3, 32, 7),
                           small("mobilenet_v2", 3, 32, 7), small("inception_v3", 3, 75, 7)}) {
    INFO(spec.name);
    const auto d = model::describe_model(spec);
    CHECK(model::infer_shapes(d.graph, d.input).back() == model::Shape{spec.classes});
  }
}

TEST_CASE("shape inference: inputs that do not fit are named errors") {
  model::Graph g;
  int x = g.op(model::Graph::input, model::Conv2d{model::conv2d(3, 4, 3)});
  x = g.op(x, model::Flatten{});
  g.op(x, model::Dense{100, 2, model::Init::glorot});  // 4x6x6 = 144 features, not 100
  CHECK_THROWS_WITH_AS(model::infer_shapes(g, {3, 8, 8}),
                       "graph node 3 (dense): expects 100 features, got 144",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model::infer_shapes(g, {1, 8, 8}),
                       "graph node 1 (conv2d): expects 3 channels, got 1x8x8",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(model::infer_shapes(g, {3, 2, 2}),
                       "graph node 1 (conv2d): kernel 3 is larger than the padded input 2",
                       std::invalid_argument);
  model::Graph c;
  const int a = c.op(model::Graph::input, model::Pool2d{});
  c.concat({a, model::Graph::input});
  CHECK_THROWS_WITH_AS(model::infer_shapes(c, {2, 8, 8}),
                       "graph node 2 (add/concat): concat of 2x4x4 and 2x8x8: H and W differ",
                       std::invalid_argument);
}

TEST_CASE(
    "backward buffers: deltas alive at once never share, kinds never mix, partials per kind") {
  // A chain 0 -> 1 -> 2 -> 3 -> 4 of one kind: two buffers alternate (a delta is freed once its
  // node's backward has written the input's).
  const std::vector<std::vector<int>> chain = {{}, {0}, {1}, {2}, {3}};
  const auto same = [](std::size_t) { return 1; };
  auto plan = model::plan_backward_buffers(
      chain.size(), [&](std::size_t i) -> const std::vector<int>& { return chain[i]; }, same);
  CHECK(plan.delta[0] == model::BackwardBuffers::none);
  CHECK(plan.sized_by.size() == 2);
  CHECK(plan.delta[4] != plan.delta[3]);
  CHECK(plan.delta[3] != plan.delta[2]);
  CHECK(plan.delta[4] == plan.delta[2]);
  // Kinds by node parity: no buffer holds both kinds.
  const auto parity = [](std::size_t i) { return static_cast<int>(i % 2); };
  plan = model::plan_backward_buffers(
      chain.size(), [&](std::size_t i) -> const std::vector<int>& { return chain[i]; }, parity);
  for (std::size_t i = 1; i < chain.size(); ++i)
    CHECK(parity(plan.sized_by[plan.delta[i]]) == parity(i));
  // A residual: node 1 is read by 2 and by the add (3): it gets a partial, the others none.
  const std::vector<std::vector<int>> residual = {{}, {0}, {1}, {2, 1}, {3}};
  plan = model::plan_backward_buffers(
      residual.size(), [&](std::size_t i) -> const std::vector<int>& { return residual[i]; }, same);
  CHECK(plan.partial[1] != model::BackwardBuffers::none);
  CHECK(plan.partial[1] != plan.delta[1]);
  for (std::size_t i : {2, 3, 4}) CHECK(plan.partial[i] == model::BackwardBuffers::none);
  // While node 3's backward writes 2's and 1's deltas, 3's, 2's and 1's are alive together.
  CHECK(plan.delta[1] != plan.delta[2]);
  CHECK(plan.delta[1] != plan.delta[3]);
  CHECK(plan.delta[2] != plan.delta[3]);
}

TEST_CASE("backward schedule: the first share into the delta, later ones into the partial") {
  using model::Share;
  model::Graph g;
  const int a = g.op(model::Graph::input, model::Dense{4, 4, model::Init::glorot});  // 20
  const int r = g.op(a, model::Eltwise{});
  const int s = g.add(r, a);  // a is read twice
  const int t = g.add(s, s);  // x + x
  g.op(t, model::Dense{4, 2, model::Init::glorot});
  const model::BackwardSchedule schedule(g);
  CHECK(schedule.share(5, 0) == Share::delta);
  CHECK(schedule.share(4, 0) == Share::delta);
  CHECK(schedule.share(4, 1) == Share::partial);
  CHECK(schedule.share(3, 0) == Share::delta);
  CHECK(schedule.share(3, 1) == Share::delta);  // node 3 runs backward before node 2
  CHECK(schedule.share(2, 0) == Share::partial);
  CHECK(schedule.share(1, 0) == Share::none);  // the model's input needs no gradient
  CHECK(schedule.consumers(1) == 2);
  CHECK(schedule.consumers(3) == 2);
  CHECK(schedule.consumers(5) == 0);
  // After a node with parameters, everything from its offset on is final.
  CHECK(schedule.gradients_ready(5) == std::optional<std::size_t>(20));
  CHECK(schedule.gradients_ready(1) == std::optional<std::size_t>(0));
  CHECK_FALSE(schedule.gradients_ready(2).has_value());
  CHECK_FALSE(schedule.gradients_ready(4).has_value());
}

TEST_CASE("backward schedule: a graph without an operation or with an unread node is refused") {
  CHECK_THROWS_AS(model::BackwardSchedule(model::Graph()), std::invalid_argument);
  model::Graph g;
  g.op(model::Graph::input, model::Flatten{});  // never read
  g.op(model::Graph::input, model::Dense{4, 2, model::Init::glorot});
  CHECK_THROWS_WITH_AS(model::BackwardSchedule{g}, doctest::Contains("graph node 1 is never used"),
                       std::invalid_argument);
}
