// Training data: IDX files (MNIST / Fashion-MNIST format, gzip'd or raw), CIFAR-10 and CIFAR-100
// (their binary versions) and a seeded synthetic set. Images are stored as floats scaled to [0, 1],
// one image after another (C×H×W each).
#pragma once

#include <array>
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

// The record layout of one of the CIFAR binary files: `label_bytes` label bytes (CIFAR-10: the
// class; CIFAR-100: the coarse class, then the fine one), then 3072 pixel bytes, the R, G and B
// 32x32 planes row-major, which is already the C×H×W order of Dataset.
struct CifarFormat {
  int label_bytes = 1;
  int label_index = 0;                      // the label byte used as the class
  std::array<int, 2> label_classes{10, 0};  // the range of each label byte, checked on reading
  std::array<const char*, 2> label_names{"label", ""};  // for error messages

  int classes() const { return label_classes[static_cast<std::size_t>(label_index)]; }
  std::size_t record_bytes() const { return static_cast<std::size_t>(label_bytes) + 3 * 32 * 32; }
};
inline constexpr CifarFormat kCifar10{1, 0, {10, 0}, {"label", ""}};
inline constexpr CifarFormat kCifar100Fine{2, 1, {20, 100}, {"coarse label", "fine label"}};
inline constexpr CifarFormat kCifar100Coarse{2, 0, {20, 100}, {"coarse label", "fine label"}};

// Reads CIFAR binary files one after another into one 3×32×32 data set, pixels scaled to [0, 1].
// Throws DatasetError naming the file on a missing or empty file, a size that is not a multiple
// of the record size, or a label (any of the record's labels) out of range, with its record index.
Dataset read_cifar(const std::vector<std::filesystem::path>& files, const CifarFormat& format);

// CIFAR-10 binary version from `dir` or from its archive's subdirectory dir/cifar-10-batches-bin:
// data_batch_1..5.bin for training and test_batch.bin; all six must exist.
DataSplit load_cifar10(const std::filesystem::path& dir);
// CIFAR-100 binary version from `dir` or dir/cifar-100-binary: train.bin and test.bin, with the
// 100 fine labels, or the 20 coarse ones when `coarse` (the split is then named cifar100-coarse).
DataSplit load_cifar100(const std::filesystem::path& dir, bool coarse = false);

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
