// What to train, backend-neutral: the model (ModelSpec: its name in the zoo and its sizes) and
// its optimizer (OptimizerOptions, read by optimizer_recipe.hpp). Every backend takes both
// through trainer/backend.hpp, which names them in namespace trainer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace scalebench::trainer::model {

struct ModelSpec {
  std::string name = "mlp";
  std::size_t input_size = 784;               // C×H×W of one image
  int channels = 1, height = 28, width = 28;  // the image shape, for convolutional models
  std::vector<int> hidden{128};               // hidden layer widths of the MLP
  int classes = 10;
  std::uint32_t seed = 1;  // parameter initialisation
  int rank = 0;            // dropout masks differ between ranks (seeded by seed and rank)
};

struct OptimizerOptions {
  double lr = 0.05;  // already scaled by the number of ranks
  double momentum = 0.0;
  std::string name = "sgd";  // sgd | momentum | nesterov | adadelta | rmsprop | adam | radam
  double weight_decay = 0.0;
};

}  // namespace scalebench::trainer::model
