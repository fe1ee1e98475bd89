// Training data: IDX files (MNIST / Fashion-MNIST format, gzip'd or raw) and a seeded synthetic
// set. Images are stored as floats scaled to [0, 1], one image after another (C×H×W each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace scalebench::trainer {

struct Shape {
  int channels = 1;
  int height = 28;
  int width = 28;
  std::size_t elements() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) *
           static_cast<std::size_t>(width);
  }
  bool operator==(const Shape&) const = default;
};

// Parses "CxHxW" (e.g. "1x28x28" or "3x32x32"); throws UsageError otherwise.
Shape parse_shape(const std::string& text);
std::string to_string(const Shape& shape);

struct Dataset {
  Shape shape;
  int classes = 0;
  std::vector<float> images;  // size() × shape.elements()
  std::vector<std::int32_t> labels;

  std::size_t size() const { return labels.size(); }
  std::span<const float> image(std::size_t i) const {
    return std::span<const float>(images).subspan(i * shape.elements(), shape.elements());
  }
  // Keeps only the first n images (no-op when n >= size()).
  void truncate(std::size_t n);
};

struct DataSplit {
  std::string name;  // the --dataset value, reported in the header
  Dataset train;
  std::optional<Dataset> test;
};

// One IDX file of unsigned bytes: its dimensions and its data.
struct IdxFile {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;
};

// Reads an IDX file of unsigned bytes with `expected_dims` dimensions, gzip'd or raw (zlib reads
// both). Throws DatasetError naming the file on a missing file, a wrong magic number, or data
// that is shorter or longer than the dimensions say.
IdxFile read_idx(const std::filesystem::path& path, int expected_dims);

// Reads an images file (idx3) and its labels file (idx1), checks that they agree, and scales
// pixels to [0, 1]. `classes` of 0 means "max label + 1".
Dataset read_idx_pair(const std::filesystem::path& images_path,
                      const std::filesystem::path& labels_path, int classes = 0);

// Fashion-MNIST from `dir` (train-* and t10k-* files, .gz or raw); both splits must exist.
DataSplit load_fashion_mnist(const std::filesystem::path& dir);
// Any MNIST-style IDX set in `dir`: train-* required, t10k-* used when present.
DataSplit load_idx_dir(const std::filesystem::path& dir);

struct SyntheticSpec {
  Shape shape;
  int classes = 10;
  std::size_t train_images = 60000;
  std::size_t test_images = 10000;
  std::uint32_t seed = 1;
};

// A learnable synthetic set: each class has a random prototype image, and each sample is its
// class's prototype blended with uniform noise. The same spec gives the same bytes everywhere
// (the generator avoids the implementation-defined std:: distributions).
DataSplit make_synthetic(const SyntheticSpec& spec);

}  // namespace scalebench::trainer
