#include "trainer/model/zoo.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>

#include "trainer/errors.hpp"
#include "trainer/model/shapes.hpp"

namespace scalebench::trainer::model {
namespace {

void check_classes(const ModelSpec& spec) {
  if (spec.input_size == 0 || spec.classes < 2) {
    throw UsageError(
        fmt::format("model {} needs a non-empty input and at least 2 classes", spec.name));
  }
}

void check_image(const ModelSpec& spec, int min_side) {
  check_classes(spec);
  if (spec.height < min_side || spec.width < min_side) {
    throw UsageError(fmt::format("{} needs images of at least {}x{}, got {}x{}x{}", spec.name,
                                 min_side, min_side, spec.channels, spec.height, spec.width));
  }
}

InputDims image_dims(const ModelSpec& spec) {
  return InputDims{spec.channels, spec.height, spec.width};
}

// Dropout masks differ between ranks and between the dropout layers of one model.
std::uint64_t dropout_seed(const ModelSpec& spec, int layer) {
  return ((std::uint64_t{spec.seed} << 32) ^ static_cast<std::uint64_t>(spec.rank)) * 2 +
         static_cast<std::uint64_t>(layer);
}

// Appends layers to a graph; each call returns the new node.
class Builder {
 public:
  Builder(const ModelSpec& spec, InputDims input) : spec_(spec), input_(std::move(input)) {}
  Graph& graph() { return graph_; }
  InputDims& input() { return input_; }

  int conv(int from, Conv2dOptions o) { return graph_.op(from, Conv2d{o}); }
  // Convolution without bias (a batch norm follows), He initialisation, then batch norm with
  // its ReLU fused when `relu`.
  int conv_bn(int from, int in, int out, Pair kernel, Pair stride, Pair padding, bool relu,
              float epsilon = 1e-5f, int groups = 1) {
    Conv2dOptions o;
    o.in_channels = in;
    o.out_channels = out;
    o.kernel = kernel;
    o.stride = stride;
    o.padding = padding;
    o.padding_end = padding;
    o.groups = groups;
    o.bias = false;
    o.init = Init::he;
    const int c = conv(from, o);
    return graph_.op(c, BatchNorm{out, epsilon, 0.1f, relu});
  }
  int activation(int from, Activation a) { return graph_.op(from, Eltwise{a}); }
  int pool(int from, PoolKind kind, int kernel, int stride, int padding = 0) {
    Pool2dOptions o;
    o.kind = kind;
    o.kernel = {kernel, kernel};
    o.stride = {stride, stride};
    o.padding = {padding, padding};
    o.padding_end = {padding, padding};
    return graph_.op(from, Pool2d{o});
  }
  int dropout(int from, float rate) {
    return graph_.op(from, Dropout{rate, dropout_seed(spec_, dropouts_++)});
  }
  // Its input width is the flattened shape of `from`, inferred (shapes.hpp), not computed by hand.
  int dense(int from, std::size_t out, Init init) {
    const auto in = elements(infer_shapes(graph_, input_).at(static_cast<std::size_t>(from)));
    return graph_.op(from, Dense{static_cast<std::size_t>(in), out, init});
  }
  // Global average pooling, flatten, then dropout (rate > 0) and the classifier.
  int head(int from, float dropout_rate) {
    int x = graph_.op(from, GlobalAvgPool{});
    x = graph_.op(x, Flatten{});
    if (dropout_rate > 0) x = dropout(x, dropout_rate);
    return dense(x, static_cast<std::size_t>(spec_.classes), Init::glorot);
  }

 private:
  const ModelSpec& spec_;
  InputDims input_;
  Graph graph_;
  int dropouts_ = 0;
};

ModelDescription finish(Builder& b) {
  return ModelDescription{std::move(b.graph()), std::move(b.input())};
}

// ---- ResNet-50 ----

// torchvision's Bottleneck: 1×1 → 3×3 (stride) → 1×1 (×4), each with batch norm; the shortcut
// is the input, or a strided 1×1 projection with batch norm when the shape changes.
int bottleneck(Builder& b, int x, int in, int planes, int stride) {
  const int out = planes * 4;
  int y = b.conv_bn(x, in, planes, {1, 1}, {1, 1}, {0, 0}, true);
  y = b.conv_bn(y, planes, planes, {3, 3}, {stride, stride}, {1, 1}, true);
  y = b.conv_bn(y, planes, out, {1, 1}, {1, 1}, {0, 0}, false);
  int shortcut = x;
  if (stride != 1 || in != out) {
    shortcut = b.conv_bn(x, in, out, {1, 1}, {stride, stride}, {0, 0}, false);
  }
  const int sum = b.graph().add(y, shortcut);
  return b.activation(sum, Activation::relu);
}

// ---- MobileNetV2 ----

int inverted_residual(Builder& b, int x, int in, int out, int stride, int expand) {
  const int hidden = in * expand;
  int y = x;
  if (expand != 1) {
    y = b.conv_bn(y, in, hidden, {1, 1}, {1, 1}, {0, 0}, false);
    y = b.activation(y, Activation::relu6);
  }
  y = b.conv_bn(y, hidden, hidden, {3, 3}, {stride, stride}, {1, 1}, false, 1e-5f, hidden);
  y = b.activation(y, Activation::relu6);
  y = b.conv_bn(y, hidden, out, {1, 1}, {1, 1}, {0, 0}, false);  // linear bottleneck
  if (stride == 1 && in == out) y = b.graph().add(y, x);
  return y;
}

// ---- Inception v3 (torchvision's module names) ----

constexpr float kInceptionEps = 1e-3f;

int unit(Builder& b, int x, int in, int out, Pair kernel, Pair stride = {1, 1},
         Pair padding = {0, 0}) {
  return b.conv_bn(x, in, out, kernel, stride, padding, true, kInceptionEps);
}
int unit(Builder& b, int x, int in, int out, int kernel, int stride = 1, int padding = 0) {
  return unit(b, x, in, out, {kernel, kernel}, {stride, stride}, {padding, padding});
}

int inception_a(Builder& b, int x, int in, int pool_features) {
  const int b1 = unit(b, x, in, 64, 1);
  int b5 = unit(b, x, in, 48, 1);
  b5 = unit(b, b5, 48, 64, 5, 1, 2);
  int b3 = unit(b, x, in, 64, 1);
  b3 = unit(b, b3, 64, 96, 3, 1, 1);
  b3 = unit(b, b3, 96, 96, 3, 1, 1);
  int bp = b.pool(x, PoolKind::average, 3, 1, 1);
  bp = unit(b, bp, in, pool_features, 1);
  return b.graph().concat({b1, b5, b3, bp});  // 64 + 64 + 96 + pool_features
}

int inception_b(Builder& b, int x, int in) {
  const int b3 = unit(b, x, in, 384, 3, 2);
  int bd = unit(b, x, in, 64, 1);
  bd = unit(b, bd, 64, 96, 3, 1, 1);
  bd = unit(b, bd, 96, 96, 3, 2);
  const int bp = b.pool(x, PoolKind::max, 3, 2);
  return b.graph().concat({b3, bd, bp});  // 384 + 96 + in
}

int inception_c(Builder& b, int x, int in, int c7) {
  const int b1 = unit(b, x, in, 192, 1);
  int b7 = unit(b, x, in, c7, 1);
  b7 = unit(b, b7, c7, c7, {1, 7}, {1, 1}, {0, 3});
  b7 = unit(b, b7, c7, 192, {7, 1}, {1, 1}, {3, 0});
  int bd = unit(b, x, in, c7, 1);
  bd = unit(b, bd, c7, c7, {7, 1}, {1, 1}, {3, 0});
  bd = unit(b, bd, c7, c7, {1, 7}, {1, 1}, {0, 3});
  bd = unit(b, bd, c7, c7, {7, 1}, {1, 1}, {3, 0});
  bd = unit(b, bd, c7, 192, {1, 7}, {1, 1}, {0, 3});
  int bp = b.pool(x, PoolKind::average, 3, 1, 1);
  bp = unit(b, bp, in, 192, 1);
  return b.graph().concat({b1, b7, bd, bp});  // 768
}

int inception_d(Builder& b, int x, int in) {
  int b3 = unit(b, x, in, 192, 1);
  b3 = unit(b, b3, 192, 320, 3, 2);
  int b7 = unit(b, x, in, 192, 1);
  b7 = unit(b, b7, 192, 192, {1, 7}, {1, 1}, {0, 3});
  b7 = unit(b, b7, 192, 192, {7, 1}, {1, 1}, {3, 0});
  b7 = unit(b, b7, 192, 192, 3, 2);
  const int bp = b.pool(x, PoolKind::max, 3, 2);
  return b.graph().concat({b3, b7, bp});  // 320 + 192 + in
}

int inception_e(Builder& b, int x, int in) {
  const int b1 = unit(b, x, in, 320, 1);
  const int b3 = unit(b, x, in, 384, 1);
  const int b3a = unit(b, b3, 384, 384, {1, 3}, {1, 1}, {0, 1});
  const int b3b = unit(b, b3, 384, 384, {3, 1}, {1, 1}, {1, 0});
  int bd = unit(b, x, in, 448, 1);
  bd = unit(b, bd, 448, 384, 3, 1, 1);
  const int bda = unit(b, bd, 384, 384, {1, 3}, {1, 1}, {0, 1});
  const int bdb = unit(b, bd, 384, 384, {3, 1}, {1, 1}, {1, 0});
  int bp = b.pool(x, PoolKind::average, 3, 1, 1);
  bp = unit(b, bp, in, 192, 1);
  return b.graph().concat({b1, b3a, b3b, bda, bdb, bp});  // 320 + 768 + 768 + 192 = 2048
}

}  // namespace

ModelDescription make_mlp(const ModelSpec& spec) {
  check_classes(spec);
  Builder b(spec, InputDims{static_cast<std::int64_t>(spec.input_size)});
  int x = Graph::input;
  for (int h : spec.hidden) {
    if (h <= 0) throw UsageError(fmt::format("--hidden sizes must be positive, got {}", h));
    x = b.dense(x, static_cast<std::size_t>(h), Init::he);
    x = b.activation(x, Activation::relu);
  }
  b.dense(x, static_cast<std::size_t>(spec.classes), Init::glorot);
  return finish(b);
}

ModelDescription make_mnist_cnn(const ModelSpec& spec) {
  check_image(spec, 5);
  // Keras's defaults: Glorot-uniform kernels, zero biases, 'valid' padding.
  Conv2dOptions c1 = conv2d(spec.channels, 32, 3);
  c1.relu = true;
  Conv2dOptions c2 = conv2d(32, 64, 3);
  c2.relu = true;
  Builder b(spec, image_dims(spec));
  int x = b.conv(Graph::input, c1);
  x = b.conv(x, c2);
  x = b.pool(x, PoolKind::max, 2, 2);
  x = b.dropout(x, 0.25f);
  x = b.graph().op(x, Flatten{});
  x = b.dense(x, 128, Init::glorot);
  x = b.activation(x, Activation::relu);
  x = b.dropout(x, 0.5f);
  b.dense(x, static_cast<std::size_t>(spec.classes), Init::glorot);
  return finish(b);
}

ModelDescription make_lenet5(const ModelSpec& spec) {
  check_image(spec, 28);
  // The paper feeds 32×32 images: MNIST's 28×28 digits centred in a 32×32 field.
  const int pad = spec.height < 32 || spec.width < 32 ? 2 : 0;
  Builder b(spec, image_dims(spec));
  int x = b.conv(Graph::input, conv2d(spec.channels, 6, 5, 1, pad));
  x = b.activation(x, Activation::tanh);
  x = b.pool(x, PoolKind::average, 2, 2);
  x = b.conv(x, conv2d(6, 16, 5));
  x = b.activation(x, Activation::tanh);
  x = b.pool(x, PoolKind::average, 2, 2);
  x = b.conv(x, conv2d(16, 120, 5));
  x = b.activation(x, Activation::tanh);
  x = b.graph().op(x, Flatten{});
  x = b.dense(x, 84, Init::glorot);
  x = b.activation(x, Activation::tanh);
  b.dense(x, static_cast<std::size_t>(spec.classes), Init::glorot);
  return finish(b);
}

ModelDescription make_vgg16(const ModelSpec& spec) {
  check_image(spec, 32);
  Builder b(spec, image_dims(spec));
  int x = Graph::input, in = spec.channels;
  const std::vector<std::vector<int>> blocks{
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (const auto& block : blocks) {
    for (int out : block) {
      Conv2dOptions o = conv2d(in, out, 3, 1, 1);
      o.relu = true;
      // He et al. 2015 (torchvision's choice): with Glorot's, 13 ReLU convolutions shrink the
      // signal until the logits are flat and training from scratch stalls.
      o.init = Init::he;
      x = b.conv(x, o);
      in = out;
    }
    x = b.pool(x, PoolKind::max, 2, 2);
  }
  x = b.graph().op(x, Flatten{});
  x = b.dense(x, 4096, Init::he);
  x = b.activation(x, Activation::relu);
  x = b.dropout(x, 0.5f);
  x = b.dense(x, 4096, Init::he);
  x = b.activation(x, Activation::relu);
  x = b.dropout(x, 0.5f);
  b.dense(x, static_cast<std::size_t>(spec.classes), Init::glorot);
  return finish(b);
}

ModelDescription make_resnet50(const ModelSpec& spec) {
  check_image(spec, 32);
  Builder b(spec, image_dims(spec));
  int x = b.conv_bn(Graph::input, spec.channels, 64, {7, 7}, {2, 2}, {3, 3}, true);
  x = b.pool(x, PoolKind::max, 3, 2, 1);
  int in = 64;
  const int stages[4][2] = {{64, 3}, {128, 4}, {256, 6}, {512, 3}};  // planes, blocks
  for (int s = 0; s < 4; ++s) {
    for (int i = 0; i < stages[s][1]; ++i) {
      const int stride = (s > 0 && i == 0) ? 2 : 1;
      x = bottleneck(b, x, in, stages[s][0], stride);
      in = stages[s][0] * 4;
    }
  }
  b.head(x, 0.0f);
  return finish(b);
}

ModelDescription make_mobilenet_v2(const ModelSpec& spec) {
  check_image(spec, 32);
  Builder b(spec, image_dims(spec));
  int x = b.conv_bn(Graph::input, spec.channels, 32, {3, 3}, {2, 2}, {1, 1}, false);
  x = b.activation(x, Activation::relu6);
  int in = 32;
  // expansion t, output channels c, repeats n, first stride s (the paper's Table 2)
  const int settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                              {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& [t, c, n, s] : settings) {
    for (int i = 0; i < n; ++i) {
      x = inverted_residual(b, x, in, c, i == 0 ? s : 1, t);
      in = c;
    }
  }
  x = b.conv_bn(x, in, 1280, {1, 1}, {1, 1}, {0, 0}, false);
  x = b.activation(x, Activation::relu6);
  b.head(x, 0.2f);
  return finish(b);
}

ModelDescription make_inception_v3(const ModelSpec& spec) {
  check_image(spec, 75);
  Builder b(spec, image_dims(spec));
  int x = unit(b, Graph::input, spec.channels, 32, 3, 2);  // Conv2d_1a_3x3
  x = unit(b, x, 32, 32, 3);                               // Conv2d_2a_3x3
  x = unit(b, x, 32, 64, 3, 1, 1);                         // Conv2d_2b_3x3
  x = b.pool(x, PoolKind::max, 3, 2);
  x = unit(b, x, 64, 80, 1);   // Conv2d_3b_1x1
  x = unit(b, x, 80, 192, 3);  // Conv2d_4a_3x3
  x = b.pool(x, PoolKind::max, 3, 2);
  x = inception_a(b, x, 192, 32);   // Mixed_5b → 256
  x = inception_a(b, x, 256, 64);   // Mixed_5c → 288
  x = inception_a(b, x, 288, 64);   // Mixed_5d → 288
  x = inception_b(b, x, 288);       // Mixed_6a → 768
  x = inception_c(b, x, 768, 128);  // Mixed_6b
  x = inception_c(b, x, 768, 160);  // Mixed_6c
  x = inception_c(b, x, 768, 160);  // Mixed_6d
  x = inception_c(b, x, 768, 192);  // Mixed_6e
  x = inception_d(b, x, 768);       // Mixed_7a → 1280
  x = inception_e(b, x, 1280);      // Mixed_7b → 2048
  x = inception_e(b, x, 2048);      // Mixed_7c → 2048
  b.head(x, 0.5f);
  return finish(b);
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"mlp",      "mnist_cnn",    "lenet5",      "vgg16",
                                              "resnet50", "inception_v3", "mobilenet_v2"};
  return names;
}

ModelDescription describe_model(const ModelSpec& spec) {
  using Maker = ModelDescription (*)(const ModelSpec&);
  static const std::map<std::string, Maker> makers{{"mlp", make_mlp},
                                                   {"mnist_cnn", make_mnist_cnn},
                                                   {"lenet5", make_lenet5},
                                                   {"vgg16", make_vgg16},
                                                   {"resnet50", make_resnet50},
                                                   {"inception_v3", make_inception_v3},
                                                   {"mobilenet_v2", make_mobilenet_v2}};
  const auto it = makers.find(spec.name);
  if (it == makers.end()) {
    throw UsageError(fmt::format("unknown model '{}' (available: {})", spec.name,
                                 fmt::join(model_names(), ", ")));
  }
  return it->second(spec);
}

}  // namespace scalebench::trainer::model
