// trainer/cpu/models.cpp: every model's parameter count for its published input size and class
// count (the references are torchvision's and Keras's counts, written by
// scripts/reference/model_parameters.py), and one training step of each on a small input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "trainer/cpu/models.hpp"
#include "trainer/errors.hpp"
#include "trainer/options.hpp"

using namespace scalebench::trainer;

namespace {

ModelSpec image_spec(const std::string& name, int channels, int side, int classes) {
  ModelSpec spec;
  spec.name = name;
  spec.channels = channels;
  spec.height = spec.width = side;
  spec.input_size = static_cast<std::size_t>(channels * side * side);
  spec.classes = classes;
  return spec;
}

}  // namespace

TEST_CASE("mnist_cnn has the Keras model's 1,199,882 parameters for 28x28x1 and 10 classes") {
  auto model = cpu::make_model(image_spec("mnist_cnn", 1, 28, 10), {});
  // conv 3·3·1·32+32, conv 3·3·32·64+64, dense 9216·128+128, dense 128·10+10
  CHECK(model->parameter_count() == 320 + 18496 + 1179776 + 1290);
  CHECK(model->parameter_count() == 1199882);
  CHECK(model->layers().size() == 9);
}

TEST_CASE("lenet5 has 61,706 parameters for 28x28x1 (padded to 32x32) and for 32x32x1") {
  // C1 6·25+6, C3 16·6·25+16, C5 120·16·25+120, F6 84·120+84, output 10·84+10
  CHECK(cpu::make_model(image_spec("lenet5", 1, 28, 10), {})->parameter_count() == 61706);
  CHECK(cpu::make_model(image_spec("lenet5", 1, 32, 10), {})->parameter_count() == 61706);
}

TEST_CASE("the ImageNet models have their published parameter counts") {
  CHECK(cpu::make_model(image_spec("resnet50", 3, 224, 1000), {})->parameter_count() == 25557032);
  CHECK(cpu::make_model(image_spec("mobilenet_v2", 3, 224, 1000), {})->parameter_count() ==
        3504872);
  CHECK(cpu::make_model(image_spec("inception_v3", 3, 299, 1000), {})->parameter_count() ==
        23834568);
  CHECK(cpu::make_model(image_spec("vgg16", 3, 224, 1000), {})->parameter_count() == 138357544);
}

TEST_CASE("CIFAR-sized variants: the head follows the input size and the class count") {
  // ResNet-50 and MobileNetV2 pool globally: only the classifier changes (2048·990 fewer).
  CHECK(cpu::make_model(image_spec("resnet50", 3, 32, 10), {})->parameter_count() ==
        25557032 - 2048 * 990 - 990);
  CHECK(cpu::make_model(image_spec("mobilenet_v2", 3, 32, 100), {})->parameter_count() ==
        3504872 - 1280 * 900 - 900);
  // VGG-16 flattens 512×1×1 at 32×32 instead of 512×7×7.
  CHECK(cpu::make_model(image_spec("vgg16", 3, 32, 10), {})->parameter_count() ==
        138357544 - 512 * 48 * 4096 - 4096 * 990 - 990);
}

TEST_CASE("inputs too small for a model are usage errors that name the minimum") {
  CHECK_THROWS_WITH_AS(cpu::make_model(image_spec("inception_v3", 3, 64, 10), {}),
                       doctest::Contains("at least 75x75"), UsageError);
  CHECK_THROWS_AS(cpu::make_model(image_spec("resnet50", 3, 16, 10), {}), UsageError);
  CHECK_THROWS_AS(cpu::make_model(image_spec("lenet5", 1, 20, 10), {}), UsageError);
  CHECK_THROWS_WITH_AS(cpu::make_model(image_spec("alexnet", 3, 224, 10), {}),
                       doctest::Contains("available: mlp, mnist_cnn, lenet5"), UsageError);
}

// One training step and a few more on the same batch: a finite loss, gradients reaching the
// parameters (the first convolution's included, so the whole graph is connected), and a lower
// loss after a few small SGD steps.
TEST_CASE("every model trains on a small input") {
  struct Case {
    const char* name;
    int channels, side;
  };
  for (const Case c : {Case{"lenet5", 1, 28}, Case{"vgg16", 3, 32}, Case{"resnet50", 3, 32},
                       Case{"mobilenet_v2", 3, 32}, Case{"inception_v3", 3, 75}}) {
    const std::string name = c.name;
    CAPTURE(name);
    const int classes = 4;
    const std::size_t batch = 4;
    ModelSpec spec = image_spec(c.name, c.channels, c.side, classes);
    OptimizerOptions sgd;
    sgd.lr = 0.01;
    auto model = cpu::make_model(spec, sgd);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> x(batch * spec.input_size);
    for (float& v : x) v = uniform(rng);
    const std::vector<std::int32_t> labels = {0, 1, 2, 3};
    const double first = model->train_batch(x, labels, batch).loss_sum / batch;
    CHECK(std::isfinite(first));
    CHECK(first < 3 * std::log(classes));
    // The first layer is a convolution: its weights come first in the flat buffer.
    const std::span<const float> first_conv = model->gradients().first(25 * 3);
    CHECK(std::any_of(first_conv.begin(), first_conv.end(), [](float g) { return g != 0.0f; }));
    double last = first;
    for (int step = 0; step < 8; ++step) {
      model->optimizer_step();
      last = model->train_batch(x, labels, batch).loss_sum / batch;
    }
    MESSAGE(name << ": loss " << first << " -> " << last);
    CHECK(last < first);
    CHECK(std::isfinite(model->evaluate(x, labels, batch).loss_sum));
  }
}

TEST_CASE("--model's choices are the zoo's, and each builds a graph ending at its classes") {
  // One list (trainer/model/zoo.cpp): --model, the CPU and the CUDA backend all read it.
  CHECK(scalebench::trainer::model_names().size() == 7);
  for (const auto& name : scalebench::trainer::model_names()) {
    INFO(name);
    const auto spec = image_spec(name, 3, 75, 10);
    CHECK(cpu::make_model(spec, {})->parameter_count() > 0);
  }
}
