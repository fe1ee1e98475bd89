#include "trainer/dataset.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <random>

#include "trainer/errors.hpp"

namespace scalebench::trainer {
namespace fs = std::filesystem;

namespace {

// Refuse absurd headers before allocating: a corrupt file must not ask for terabytes.
constexpr std::uint64_t kMaxIdxBytes = std::uint64_t{1} << 33;  // 8 GiB

class GzFile {
 public:
  explicit GzFile(const fs::path& path) : path_(path) {
    errno = 0;
    file_ = gzopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      const char* why = errno != 0 ? std::strerror(errno) : "zlib could not open it";
      throw DatasetError(fmt::format("cannot open {}: {}", path.string(), why));
    }
  }
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  // Reads up to n bytes; returns how many were read (fewer only at the end of the data).
  std::size_t read(void* out, std::size_t n) {
    auto* bytes = static_cast<unsigned char*>(out);
    std::size_t done = 0;
    while (done < n) {
      const auto chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
      const int got = gzread(file_, bytes + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw DatasetError(fmt::format("cannot read {}: {}", path_.string(), message));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }

 private:
  fs::path path_;
  gzFile file_ = nullptr;
};

std::uint32_t big_endian_u32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// "train-images-idx3-ubyte" → the .gz file if present, else the raw one, else the .gz name (so
// the error message names what was expected).
fs::path find_idx(const fs::path& dir, const std::string& stem) {
  const fs::path gz = dir / (stem + ".gz");
  const fs::path raw = dir / stem;
  if (fs::exists(gz)) return gz;
  if (fs::exists(raw)) return raw;
  return gz;
}

// A small, portable generator: mt19937 is fully specified by the standard; the conversion to
// [0, 1) is done here instead of by uniform_real_distribution, whose output is not.
float unit_float(std::mt19937& rng) { return static_cast<float>(rng() >> 8) * 0x1.0p-24f; }

Dataset make_synthetic_split(const SyntheticSpec& spec, const std::vector<float>& prototypes,
                             std::size_t count, std::uint32_t stream_seed) {
  Dataset out;
  out.shape = spec.shape;
  out.classes = spec.classes;
  const std::size_t n = spec.shape.elements();
  out.images.resize(count * n);
  out.labels.resize(count);
  std::mt19937 rng(stream_seed);
  for (std::size_t i = 0; i < count; ++i) {
    const auto label = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(spec.classes));
    out.labels[i] = label;
    const float* proto = prototypes.data() + static_cast<std::size_t>(label) * n;
    float* image = out.images.data() + i * n;
    for (std::size_t k = 0; k < n; ++k) image[k] = 0.3f * proto[k] + 0.7f * unit_float(rng);
  }
  return out;
}

// The CIFAR files in `dir`, or in the subdirectory the archive extracts to when `dir` is its
// parent: whichever holds `first`. Neither: `dir` itself, so that errors name the file there.
fs::path cifar_dir(const fs::path& dir, const std::string& subdir, const std::string& first,
                   const std::string& what, const std::string& archive) {
  if (!fs::is_directory(dir)) {
    throw DatasetError(fmt::format(
        "{} directory {} does not exist (hint: extract {} from "
        "https://www.cs.toronto.edu/~kriz/cifar.html and pass --data-dir, or use --dataset "
        "synthetic --input-shape 3x32x32)",
        what, dir.string(), archive));
  }
  if (!fs::exists(dir / first) && fs::exists(dir / subdir / first)) return dir / subdir;
  return dir;
}

}  // namespace

Shape parse_shape(const std::string& text) {
  Shape shape;
  int* fields[] = {&shape.channels, &shape.height, &shape.width};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    auto [next, ec] = std::from_chars(p, end, *fields[i]);
    const bool separator_ok =
        (i < 2) ? (next < end && (*next == 'x' || *next == 'X')) : next == end;
    if (ec != std::errc() || *fields[i] <= 0 || !separator_ok) {
      throw UsageError(fmt::format(
          "invalid input shape '{}': expected CxHxW with positive integers, e.g. 1x28x28", text));
    }
    p = next + (i < 2 ? 1 : 0);
  }
  return shape;
}

std::string to_string(const Shape& shape) {
  return fmt::format("{}x{}x{}", shape.channels, shape.height, shape.width);
}

void Dataset::truncate(std::size_t n) {
  if (n >= size()) return;
  labels.resize(n);
  images.resize(n * shape.elements());
  labels.shrink_to_fit();
  images.shrink_to_fit();
}

IdxFile read_idx(const fs::path& path, int expected_dims) {
  GzFile file(path);
  unsigned char magic_bytes[4] = {};
  if (file.read(magic_bytes, 4) != 4) {
    throw DatasetError(
        fmt::format("{} is not an IDX file: shorter than its 4-byte magic number", path.string()));
  }
  const std::uint32_t magic = big_endian_u32(magic_bytes);
  const std::uint32_t expected_magic = 0x0800u | static_cast<std::uint32_t>(expected_dims);
  if (magic != expected_magic) {
    throw DatasetError(fmt::format(
        "{}: bad magic number 0x{:08x}, expected 0x{:08x} (IDX, unsigned bytes, {} dimension{})",
        path.string(), magic, expected_magic, expected_dims, expected_dims == 1 ? "" : "s"));
  }

  IdxFile idx;
  std::uint64_t total = 1;
  for (int d = 0; d < expected_dims; ++d) {
    unsigned char dim_bytes[4] = {};
    if (file.read(dim_bytes, 4) != 4) {
      throw DatasetError(fmt::format("{}: truncated header (dimension {} of {} missing)",
                                     path.string(), d + 1, expected_dims));
    }
    idx.dims.push_back(big_endian_u32(dim_bytes));
    total *= idx.dims.back();
    if (total > kMaxIdxBytes) {
      throw DatasetError(fmt::format("{}: header claims more than {} bytes of data; corrupt file?",
                                     path.string(), kMaxIdxBytes));
    }
  }

  idx.data.resize(static_cast<std::size_t>(total));
  const std::size_t got = file.read(idx.data.data(), idx.data.size());
  if (got != idx.data.size()) {
    throw DatasetError(fmt::format("{}: truncated: the header promises {} bytes of data, found {}",
                                   path.string(), idx.data.size(), got));
  }
  unsigned char extra = 0;
  if (file.read(&extra, 1) != 0) {
    throw DatasetError(fmt::format("{}: trailing data after the {} bytes the header promises",
                                   path.string(), idx.data.size()));
  }
  return idx;
}

Dataset read_idx_pair(const fs::path& images_path, const fs::path& labels_path, int classes) {
  const IdxFile images = read_idx(images_path, 3);
  const IdxFile labels = read_idx(labels_path, 1);
  if (images.dims[0] != labels.dims[0]) {
    throw DatasetError(fmt::format("{} holds {} images but {} holds {} labels",
                                   images_path.string(), images.dims[0], labels_path.string(),
                                   labels.dims[0]));
  }
  if (images.dims[1] == 0 || images.dims[2] == 0) {
    throw DatasetError(fmt::format("{}: images of size {}x{}", images_path.string(), images.dims[1],
                                   images.dims[2]));
  }

  Dataset out;
  out.shape = Shape{1, static_cast<int>(images.dims[1]), static_cast<int>(images.dims[2])};
  const int max_label =
      labels.data.empty() ? 0 : *std::max_element(labels.data.begin(), labels.data.end());
  out.classes = classes > 0 ? classes : max_label + 1;
  if (max_label >= out.classes) {
    throw DatasetError(fmt::format("{}: label {} out of range for {} classes", labels_path.string(),
                                   max_label, out.classes));
  }
  out.labels.assign(labels.data.begin(), labels.data.end());
  out.images.resize(images.data.size());
  std::transform(images.data.begin(), images.data.end(), out.images.begin(),
                 [](std::uint8_t v) { return static_cast<float>(v) * (1.0f / 255.0f); });
  return out;
}

DataSplit load_fashion_mnist(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw DatasetError(fmt::format(
        "Fashion-MNIST directory {} does not exist (hint: apt-get install dataset-fashion-mnist, "
        "or pass --data-dir, or use --dataset synthetic)",
        dir.string()));
  }
  DataSplit split;
  split.name = "fashion-mnist";
  split.train = read_idx_pair(find_idx(dir, "train-images-idx3-ubyte"),
                              find_idx(dir, "train-labels-idx1-ubyte"), 10);
  split.test = read_idx_pair(find_idx(dir, "t10k-images-idx3-ubyte"),
                             find_idx(dir, "t10k-labels-idx1-ubyte"), 10);
  return split;
}

DataSplit load_idx_dir(const fs::path& dir) {
  if (!fs::is_directory(dir)) {
    throw DatasetError(
        fmt::format("IDX data directory {} does not exist (pass --data-dir)", dir.string()));
  }
  DataSplit split;
  split.name = "idx";
  split.train = read_idx_pair(find_idx(dir, "train-images-idx3-ubyte"),
                              find_idx(dir, "train-labels-idx1-ubyte"));
  const fs::path test_images = find_idx(dir, "t10k-images-idx3-ubyte");
  const fs::path test_labels = find_idx(dir, "t10k-labels-idx1-ubyte");
  if (fs::exists(test_images) || fs::exists(test_labels)) {
    split.test = read_idx_pair(test_images, test_labels, split.train.classes);
    if (!(split.test->shape == split.train.shape)) {
      throw DatasetError(fmt::format("{}: images are {}, the training images are {}",
                                     test_images.string(), to_string(split.test->shape),
                                     to_string(split.train.shape)));
    }
  }
  return split;
}

Dataset read_cifar(const std::vector<fs::path>& files, const CifarFormat& format) {
  const std::size_t record = format.record_bytes();
  const auto label_bytes = static_cast<std::size_t>(format.label_bytes);
  const std::size_t pixels = record - label_bytes;

  // Check every size first: a bad last file should not cost reading the others.
  std::vector<std::size_t> records;
  for (const fs::path& path : files) {
    std::error_code ec;
    const std::uintmax_t bytes = fs::file_size(path, ec);
    if (ec) throw DatasetError(fmt::format("cannot open {}: {}", path.string(), ec.message()));
    if (bytes == 0 || bytes % record != 0) {
      throw DatasetError(fmt::format(
          "{}: {} bytes is not a whole number of {}-byte records ({} label byte{} + 3072 pixels); "
          "truncated, or not the binary version?",
          path.string(), bytes, record, label_bytes, label_bytes == 1 ? "" : "s"));
    }
    records.push_back(static_cast<std::size_t>(bytes / record));
  }

  Dataset out;
  out.shape = Shape{3, 32, 32};
  out.classes = format.classes();
  std::size_t total = 0;
  for (std::size_t n : records) total += n;
  out.images.resize(total * pixels);
  out.labels.resize(total);

  std::vector<unsigned char> bytes;
  std::size_t next = 0;  // the first image of the current file in `out`
  for (std::size_t f = 0; f < files.size(); ++f) {
    const fs::path& path = files[f];
    bytes.resize(records[f] * record);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      throw DatasetError(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    }
    if (!in.read(reinterpret_cast<char*>(bytes.data()),
                 static_cast<std::streamsize>(bytes.size()))) {
      throw DatasetError(
          fmt::format("cannot read {}: shorter than its size on disk", path.string()));
    }
    for (std::size_t r = 0; r < records[f]; ++r) {
      const unsigned char* p = bytes.data() + r * record;
      for (std::size_t k = 0; k < label_bytes; ++k) {
        if (p[k] >= format.label_classes[k]) {
          throw DatasetError(fmt::format(
              "{}: record {} (from 0): {} {} out of range for {} classes", path.string(), r,
              format.label_names[k], int{p[k]}, format.label_classes[k]));
        }
      }
      out.labels[next + r] = p[format.label_index];
      float* image = out.images.data() + (next + r) * pixels;
      for (std::size_t k = 0; k < pixels; ++k) {
        image[k] = static_cast<float>(p[label_bytes + k]) * (1.0f / 255.0f);
      }
    }
    next += records[f];
  }
  return out;
}

DataSplit load_cifar10(const fs::path& dir) {
  const fs::path base = cifar_dir(dir, "cifar-10-batches-bin", "data_batch_1.bin", "CIFAR-10",
                                  "cifar-10-binary.tar.gz");
  std::vector<fs::path> train_files;
  for (int i = 1; i <= 5; ++i) train_files.push_back(base / fmt::format("data_batch_{}.bin", i));
  DataSplit split;
  split.name = "cifar10";
  split.train = read_cifar(train_files, kCifar10);
  split.test = read_cifar({base / "test_batch.bin"}, kCifar10);
  return split;
}

DataSplit load_cifar100(const fs::path& dir, bool coarse) {
  const fs::path base =
      cifar_dir(dir, "cifar-100-binary", "train.bin", "CIFAR-100", "cifar-100-binary.tar.gz");
  const CifarFormat& format = coarse ? kCifar100Coarse : kCifar100Fine;
  DataSplit split;
  split.name = coarse ? "cifar100-coarse" : "cifar100";
  split.train = read_cifar({base / "train.bin"}, format);
  split.test = read_cifar({base / "test.bin"}, format);
  return split;
}

DataSplit make_synthetic(const SyntheticSpec& spec) {
  if (spec.classes < 2) throw UsageError("--classes must be at least 2");
  if (spec.train_images == 0) throw UsageError("--train-images must be positive");
  const std::size_t n = spec.shape.elements();
  std::vector<float> prototypes(static_cast<std::size_t>(spec.classes) * n);
  std::mt19937 rng(spec.seed);
  for (float& v : prototypes) v = unit_float(rng);

  DataSplit split;
  split.name = "synthetic";
  split.train = make_synthetic_split(spec, prototypes, spec.train_images, spec.seed + 1);
  if (spec.test_images > 0) {
    split.test = make_synthetic_split(spec, prototypes, spec.test_images, spec.seed + 2);
  }
  return split;
}

}  // namespace scalebench::trainer
