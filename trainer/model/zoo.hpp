// The models of --model, described once for every backend as model::Graph. Each follows its
// paper and the Keras application / torchvision model of the same name; docs/trainer.md gives the
// structure and the parameter count for the published input size and class count, which
// tests/trainer/test_models checks exactly (reference counts from torchvision:
// scripts/reference/model_parameters.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model/ops.hpp"
#include "trainer/model/spec.hpp"

namespace scalebench::trainer::model {

// The shape of one input (e.g. {784} or {1, 28, 28}).
using InputDims = std::vector<std::int64_t>;

struct ModelDescription {
  Graph graph;
  InputDims input;
};

// --model mlp: Dense(He)+ReLU per hidden width, then Dense(Glorot) to the classes.
ModelDescription make_mlp(const ModelSpec& spec);
// --model mnist_cnn: the Keras/Databricks MNIST CNN (reference/FACTS.md), exactly:
// Conv2D(32,3×3,relu) → Conv2D(64,3×3,relu) → MaxPool(2×2) → Dropout(0.25) → Flatten →
// Dense(128,relu) → Dropout(0.5) → Dense(classes); 1,199,882 parameters for 1×28×28 and 10.
ModelDescription make_mnist_cnn(const ModelSpec& spec);
// --model lenet5: LeCun et al. 1998 with full C3 connections: conv 6@5×5 (28×28 inputs padded
// by 2 to the paper's 32×32) → tanh → avg-pool 2 → conv 16@5×5 → tanh → avg-pool 2 → conv
// 120@5×5 (C5) → tanh → Dense(84) → tanh → Dense(classes); 61,706 parameters for 10 classes.
ModelDescription make_lenet5(const ModelSpec& spec);
// --model vgg16: Simonyan & Zisserman configuration D: 13 conv 3×3 (ReLU) in five blocks with
// max-pooling, Dense(4096) → Dense(4096) with dropout 0.5 → Dense(classes); 138,357,544
// parameters for 3×224×224 and 1000 classes.
ModelDescription make_vgg16(const ModelSpec& spec);
// --model resnet50: He et al. 2016, bottleneck blocks [3, 4, 6, 3], batch norm after every
// convolution, stride on the 3×3 convolution (torchvision's "v1.5", as in Horovod's and
// MLPerf's benchmarks); 25,557,032 parameters for 3×224×224 and 1000 classes.
ModelDescription make_resnet50(const ModelSpec& spec);
// --model inception_v3: Szegedy et al. 2016 as torchvision's inception_v3 without the auxiliary
// classifier (conv → BN(eps 1e-3) → ReLU units, Mixed_5b … Mixed_7c, dropout 0.5);
// 23,834,568 parameters for 3×299×299 and 1000 classes. Inputs must be at least 75×75.
ModelDescription make_inception_v3(const ModelSpec& spec);
// --model mobilenet_v2: Sandler et al. 2018, width 1.0: inverted residual blocks with ReLU6 and
// linear bottlenecks, 1280-channel head, dropout 0.2; 3,504,872 parameters for 3×224×224 and
// 1000 classes.
ModelDescription make_mobilenet_v2(const ModelSpec& spec);

// The model named by spec.name; UsageError naming the available ones otherwise.
ModelDescription describe_model(const ModelSpec& spec);
// The one list of model names (--model's choices, every backend's).
const std::vector<std::string>& model_names();

}  // namespace scalebench::trainer::model
