// The models of --model as CPU networks: the backend-neutral descriptions of trainer/model/zoo.hpp
// (where each model's structure is documented), each lowered to a Network.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trainer/cpu/network.hpp"
#include "trainer/model/zoo.hpp"

namespace scalebench::trainer::cpu {

// --model mlp: Dense(He)+ReLU per hidden width, then Dense(Glorot) to the classes.
std::unique_ptr<Network> make_mlp(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model mnist_cnn: the Keras/Databricks MNIST CNN (reference/FACTS.md), exactly:
// Conv2D(32,3×3,relu) → Conv2D(64,3×3,relu) → MaxPool(2×2) → Dropout(0.25) → Flatten →
// Dense(128,relu) → Dropout(0.5) → Dense(classes); 1,199,882 parameters for 1×28×28 and 10.
std::unique_ptr<Network> make_mnist_cnn(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model lenet5: LeCun et al. 1998 with full C3 connections: conv 6@5×5 (28×28 inputs padded
// by 2 to the paper's 32×32) → tanh → avg-pool 2 → conv 16@5×5 → tanh → avg-pool 2 → conv
// 120@5×5 (C5) → tanh → Dense(84) → tanh → Dense(classes); 61,706 parameters for 10 classes.
std::unique_ptr<Network> make_lenet5(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model vgg16: Simonyan & Zisserman configuration D: 13 conv 3×3 (ReLU) in five blocks with
// max-pooling, Dense(4096) → Dense(4096) with dropout 0.5 → Dense(classes); 138,357,544
// parameters for 3×224×224 and 1000 classes.
std::unique_ptr<Network> make_vgg16(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model resnet50: He et al. 2016, bottleneck blocks [3, 4, 6, 3], batch norm after every
// convolution, stride on the 3×3 convolution (torchvision's "v1.5", as in Horovod's and
// MLPerf's benchmarks); 25,557,032 parameters for 3×224×224 and 1000 classes.
std::unique_ptr<Network> make_resnet50(const ModelSpec& spec, const OptimizerOptions& optimizer);
// --model inception_v3: Szegedy et al. 2016 as torchvision's inception_v3 without the auxiliary
// classifier (conv → BN(eps 1e-3) → ReLU units, Mixed_5b … Mixed_7c, dropout 0.5);
// 23,834,568 parameters for 3×299×299 and 1000 classes. Inputs must be at least 75×75.
std::unique_ptr<Network> make_inception_v3(const ModelSpec& spec,
                                           const OptimizerOptions& optimizer);
// --model mobilenet_v2: Sandler et al. 2018, width 1.0: inverted residual blocks with ReLU6 and
// linear bottlenecks, 1280-channel head, dropout 0.2; 3,504,872 parameters for 3×224×224 and
// 1000 classes.
std::unique_ptr<Network> make_mobilenet_v2(const ModelSpec& spec,
                                           const OptimizerOptions& optimizer);

// The description lowered to a CPU network (one layer per operation), its parameters initialised
// from `seed`.
std::unique_ptr<Network> make_network(model::ModelDescription description, std::uint32_t seed,
                                      const OptimizerOptions& optimizer);

// The model named by spec.name; UsageError naming the available ones otherwise.
std::unique_ptr<Network> make_model(const ModelSpec& spec, const OptimizerOptions& optimizer);
const std::vector<std::string>& model_names();

}  // namespace scalebench::trainer::cpu
