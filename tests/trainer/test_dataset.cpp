// trainer/dataset.cpp: IDX files (gzip'd and raw), CIFAR binary files, their errors, synthetic
// data, shapes.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "trainer/dataset.hpp"
#include "trainer/errors.hpp"

using namespace scalebench::trainer;
using scalebench::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims,
                                    const std::vector<std::uint8_t>& data) {
  std::vector<std::uint8_t> out;
  auto put = [&](std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(v >> shift));
  };
  put(magic);
  for (auto d : dims) put(d);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_gz(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  REQUIRE(file != nullptr);
  REQUIRE(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  REQUIRE(gzclose(file) == Z_OK);
}

void write_raw(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Three 2×3 images with pixels 0..17 scaled by 15, labels 2, 0, 1.
std::vector<std::uint8_t> tiny_pixels() {
  std::vector<std::uint8_t> pixels(18);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 15);
  return pixels;
}

// One CIFAR record: its label bytes, then 3072 pixels where pixel k of channel c is
// (seed + 3·c + k) mod 256, so that every record, plane and position is recognisable.
std::vector<std::uint8_t> cifar_record(const std::vector<std::uint8_t>& labels, int seed) {
  std::vector<std::uint8_t> out(labels);
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k < 1024; ++k)
      out.push_back(static_cast<std::uint8_t>((seed + 3 * c + k) % 256));
  }
  return out;
}

// A CIFAR-10 file of records with these labels; record r's pixels use seed `first_seed + r`.
void write_cifar10(const fs::path& path, const std::vector<std::uint8_t>& labels,
                   int first_seed = 0) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const auto record = cifar_record({labels[r]}, first_seed + static_cast<int>(r));
    bytes.insert(bytes.end(), record.begin(), record.end());
  }
  write_raw(path, bytes);
}

// The pixel that cifar_record put at channel c, position k, scaled exactly as the loader (and the
// IDX reader) scales it: × (1/255), which differs from / 255 in the last bit for some values.
float cifar_pixel(int seed, int c, int k) {
  return static_cast<float>((seed + 3 * c + k) % 256) * (1.0f / 255.0f);
}

// The message of the DatasetError thrown by f, or "" when none is thrown.
template <typename F>
std::string dataset_error(F&& f) {
  try {
    f();
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a gzip'd IDX pair reads back with pixels scaled to [0, 1]") {
  TempDir dir;
  write_gz(dir / "images.gz", idx_bytes(0x803, {3, 2, 3}, tiny_pixels()));
  write_gz(dir / "labels.gz", idx_bytes(0x801, {3}, {2, 0, 1}));
  const Dataset data = read_idx_pair(dir / "images.gz", dir / "labels.gz");
  CHECK(data.size() == 3);
  CHECK(data.shape == Shape{1, 2, 3});
  CHECK(data.classes == 3);  // max label + 1
  CHECK(data.labels == std::vector<std::int32_t>{2, 0, 1});
  CHECK(data.images[0] == 0.0f);
  CHECK(data.images[17] == doctest::Approx(1.0f));  // 255
  CHECK(data.image(1)[0] == doctest::Approx(90.0f / 255.0f));
}

TEST_CASE("raw (uncompressed) IDX files read the same way") {
  TempDir dir;
  write_raw(dir / "labels", idx_bytes(0x801, {4}, {1, 1, 0, 9}));
  const IdxFile idx = read_idx(dir / "labels", 1);
  CHECK(idx.dims == std::vector<std::uint32_t>{4});
  CHECK(idx.data == std::vector<std::uint8_t>{1, 1, 0, 9});
}

TEST_CASE("a wrong magic number is an error naming the file") {
  TempDir dir;
  const fs::path path = dir / "train-images-idx3-ubyte.gz";
  write_gz(path, idx_bytes(0x801, {3}, {1, 2, 3}));  // a labels file where images are expected
  const std::string message = dataset_error([&] { read_idx(path, 3); });
  CHECK(message.find(path.string()) != std::string::npos);
  CHECK(message.find("bad magic number 0x00000801, expected 0x00000803") != std::string::npos);
}

TEST_CASE("truncated data, trailing data, missing files and count mismatches are errors") {
  TempDir dir;
  write_gz(dir / "short.gz", idx_bytes(0x803, {3, 2, 3}, std::vector<std::uint8_t>(17)));
  CHECK(dataset_error([&] { read_idx(dir / "short.gz", 3); }).find("truncated") !=
        std::string::npos);
  write_gz(dir / "long.gz", idx_bytes(0x801, {2}, {1, 2, 3}));
  CHECK(dataset_error([&] { read_idx(dir / "long.gz", 1); }).find("trailing data") !=
        std::string::npos);
  const std::string missing = dataset_error([&] { read_idx(dir / "nope.gz", 1); });
  CHECK(missing.find("cannot open") != std::string::npos);
  CHECK(missing.find("nope.gz") != std::string::npos);

  write_gz(dir / "images.gz", idx_bytes(0x803, {3, 2, 3}, tiny_pixels()));
  write_gz(dir / "labels.gz", idx_bytes(0x801, {2}, {0, 1}));
  const std::string mismatch =
      dataset_error([&] { read_idx_pair(dir / "images.gz", dir / "labels.gz"); });
  CHECK(mismatch.find("3 images") != std::string::npos);
  CHECK(mismatch.find("2 labels") != std::string::npos);
}

TEST_CASE("labels outside the declared classes are an error") {
  TempDir dir;
  write_gz(dir / "images.gz", idx_bytes(0x803, {3, 2, 3}, tiny_pixels()));
  write_gz(dir / "labels.gz", idx_bytes(0x801, {3}, {0, 12, 1}));
  CHECK(dataset_error([&] {
          read_idx_pair(dir / "images.gz", dir / "labels.gz", 10);
        }).find("label 12 out of range") != std::string::npos);
}

TEST_CASE("an IDX directory without t10k files has no test set") {
  TempDir dir;
  write_gz(dir / "train-images-idx3-ubyte.gz", idx_bytes(0x803, {3, 2, 3}, tiny_pixels()));
  write_raw(dir / "train-labels-idx1-ubyte", idx_bytes(0x801, {3}, {2, 0, 1}));
  const DataSplit split = load_idx_dir(dir.path());
  CHECK(split.name == "idx");
  CHECK(split.train.size() == 3);
  CHECK_FALSE(split.test.has_value());
}

TEST_CASE("a missing Fashion-MNIST directory says how to get it") {
  const std::string message = dataset_error([] { load_fashion_mnist("/nonexistent/fmnist"); });
  CHECK(message.find("/nonexistent/fmnist") != std::string::npos);
  CHECK(message.find("dataset-fashion-mnist") != std::string::npos);
}

TEST_CASE("the installed Fashion-MNIST has the documented sizes") {
  const fs::path dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir / "train-images-idx3-ubyte.gz")) {
    SCALEBENCH_SKIP("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist)");
  }
  const DataSplit split = load_fashion_mnist(dir);
  CHECK(split.train.size() == 60000);
  REQUIRE(split.test.has_value());
  CHECK(split.test->size() == 10000);
  CHECK(split.train.shape == Shape{1, 28, 28});
  CHECK(split.train.classes == 10);
}

TEST_CASE("CIFAR-10 records read back as 3x32x32 R, G, B planes scaled to [0, 1]") {
  TempDir dir;
  write_cifar10(dir / "batch.bin", {7, 0, 9}, 100);
  const Dataset data = read_cifar({dir / "batch.bin"}, kCifar10);
  CHECK(data.size() == 3);
  CHECK(data.shape == Shape{3, 32, 32});
  CHECK(data.classes == 10);
  CHECK(data.labels == std::vector<std::int32_t>{7, 0, 9});
  REQUIRE(data.images.size() == 3 * 3072);
  for (int r = 0; r < 3; ++r) {
    const auto image = data.image(static_cast<std::size_t>(r));
    for (int c = 0; c < 3; ++c) {
      for (int k : {0, 1, 32, 155, 1023}) {
        INFO("record ", r, " channel ", c, " pixel ", k);
        CHECK(image[static_cast<std::size_t>(c * 1024 + k)] == cifar_pixel(100 + r, c, k));
      }
    }
  }
  // Record 1, red plane, pixel 155: (101 + 155) mod 256 = 0; pixel 154 is 255.
  CHECK(data.image(1)[155] == 0.0f);
  CHECK(data.image(1)[154] == 1.0f);
}

TEST_CASE(
    "CIFAR-10: five training batches in order and the test batch, in DIR or its subdirectory") {
  for (const char* subdir : {"", "cifar-10-batches-bin"}) {
    INFO("subdirectory '", std::string(subdir), "'");
    TempDir dir;
    const fs::path base = dir.path() / subdir;
    fs::create_directories(base);
    for (int b = 1; b <= 5; ++b) {
      // Batch b holds b records labelled b, b, ...: 15 training images in all.
      write_cifar10(
          base / ("data_batch_" + std::to_string(b) + ".bin"),
          std::vector<std::uint8_t>(static_cast<std::size_t>(b), static_cast<std::uint8_t>(b)),
          10 * b);
    }
    write_cifar10(base / "test_batch.bin", {3, 4}, 50);
    const DataSplit split = load_cifar10(dir.path());
    CHECK(split.name == "cifar10");
    CHECK(split.train.size() == 15);
    CHECK(split.train.shape == Shape{3, 32, 32});
    CHECK(split.train.classes == 10);
    CHECK(split.train.labels ==
          std::vector<std::int32_t>{1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5});
    CHECK(split.train.image(3)[0] == cifar_pixel(30, 0, 0));  // data_batch_3's first record
    CHECK(split.train.image(14)[2047] == cifar_pixel(54, 1, 1023));
    REQUIRE(split.test.has_value());
    CHECK(split.test->size() == 2);
    CHECK(split.test->labels == std::vector<std::int32_t>{3, 4});
    CHECK(split.test->image(1)[3071] == cifar_pixel(51, 2, 1023));
  }
}

TEST_CASE(
    "CIFAR-100: the fine label by default, the coarse one when asked, in DIR or its subdirectory") {
  for (const char* subdir : {"", "cifar-100-binary"}) {
    INFO("subdirectory '", std::string(subdir), "'");
    TempDir dir;
    const fs::path base = dir.path() / subdir;
    fs::create_directories(base);
    std::vector<std::uint8_t> train;
    for (const auto& labels : std::vector<std::vector<std::uint8_t>>{{19, 99}, {0, 42}, {5, 0}}) {
      const auto record = cifar_record(labels, labels[1]);
      train.insert(train.end(), record.begin(), record.end());
    }
    write_raw(base / "train.bin", train);
    write_raw(base / "test.bin", cifar_record({11, 77}, 77));

    const DataSplit fine = load_cifar100(dir.path());
    CHECK(fine.name == "cifar100");
    CHECK(fine.train.classes == 100);
    CHECK(fine.train.size() == 3);
    CHECK(fine.train.shape == Shape{3, 32, 32});
    CHECK(fine.train.labels == std::vector<std::int32_t>{99, 42, 0});
    CHECK(fine.train.image(1)[1024 + 5] == cifar_pixel(42, 1, 5));  // after two label bytes
    REQUIRE(fine.test.has_value());
    CHECK(fine.test->labels == std::vector<std::int32_t>{77});
    CHECK(fine.test->image(0)[3071] == cifar_pixel(77, 2, 1023));

    const DataSplit coarse = load_cifar100(dir.path(), true);
    CHECK(coarse.name == "cifar100-coarse");
    CHECK(coarse.train.classes == 20);
    CHECK(coarse.train.labels == std::vector<std::int32_t>{19, 0, 5});
    CHECK(coarse.test->labels == std::vector<std::int32_t>{11});
    CHECK(coarse.train.images == fine.train.images);
  }
}

TEST_CASE("CIFAR errors name the file: missing, not whole records, labels out of range") {
  TempDir dir;
  for (int b : {1, 2, 4, 5}) {
    write_cifar10(dir / ("data_batch_" + std::to_string(b) + ".bin"), {1});
  }
  write_cifar10(dir / "test_batch.bin", {1});
  const std::string missing = dataset_error([&] { load_cifar10(dir.path()); });
  CHECK(missing.find("cannot open") != std::string::npos);
  CHECK(missing.find((dir / "data_batch_3.bin").string()) != std::string::npos);

  std::vector<std::uint8_t> ragged = cifar_record({1}, 0);
  ragged.push_back(0);  // one byte more than a record
  write_raw(dir / "data_batch_3.bin", ragged);
  const std::string size = dataset_error([&] { load_cifar10(dir.path()); });
  CHECK(size.find((dir / "data_batch_3.bin").string()) != std::string::npos);
  CHECK(size.find("3074 bytes is not a whole number of 3073-byte records") != std::string::npos);
  write_raw(dir / "empty.bin", {});
  CHECK(dataset_error([&] {
          read_cifar({dir / "empty.bin"}, kCifar10);
        }).find("0 bytes is not a whole number") != std::string::npos);

  write_cifar10(dir / "data_batch_3.bin", {0, 9, 10, 1});
  const std::string label = dataset_error([&] { load_cifar10(dir.path()); });
  CHECK(label.find((dir / "data_batch_3.bin").string() + ": record 2 (from 0): label 10 out of "
                                                         "range for 10 classes") !=
        std::string::npos);

  // CIFAR-100: 3074-byte records; both labels are checked, whichever one is used.
  write_raw(dir / "c100.bin", cifar_record({3, 100}, 0));
  CHECK(dataset_error([&] {
          read_cifar({dir / "c100.bin"}, kCifar100Coarse);
        }).find("record 0 (from 0): fine label 100 out of range for 100 classes") !=
        std::string::npos);
  write_raw(dir / "c100.bin", cifar_record({20, 4}, 0));
  CHECK(dataset_error([&] {
          read_cifar({dir / "c100.bin"}, kCifar100Fine);
        }).find("coarse label 20 out of range for 20 classes") != std::string::npos);
  write_cifar10(dir / "c10.bin", {1});  // a CIFAR-10 file read as CIFAR-100
  CHECK(dataset_error([&] {
          read_cifar({dir / "c10.bin"}, kCifar100Fine);
        }).find("3073 bytes is not a whole number of 3074-byte records") != std::string::npos);

  const std::string no_dir = dataset_error([] { load_cifar100("/nonexistent/cifar"); });
  CHECK(no_dir.find("/nonexistent/cifar") != std::string::npos);
  CHECK(no_dir.find("cifar-100-binary.tar.gz") != std::string::npos);
  TempDir empty;
  CHECK(dataset_error([&] { load_cifar100(empty.path()); }).find((empty / "train.bin").string()) !=
        std::string::npos);
}

TEST_CASE("synthetic data is seeded, shaped and labelled as asked") {
  SyntheticSpec spec;
  spec.shape = Shape{3, 4, 5};
  spec.classes = 7;
  spec.train_images = 50;
  spec.test_images = 20;
  const DataSplit a = make_synthetic(spec);
  const DataSplit b = make_synthetic(spec);
  CHECK(a.name == "synthetic");
  CHECK(a.train.size() == 50);
  CHECK(a.test->size() == 20);
  CHECK(a.train.images.size() == 50 * 60);
  CHECK(a.train.images == b.train.images);
  CHECK(a.train.labels == b.train.labels);
  for (auto label : a.train.labels) CHECK((label >= 0 && label < 7));
  for (float v : a.train.images) CHECK((v >= 0.0f && v < 1.0f));
  spec.seed = 2;
  CHECK(make_synthetic(spec).train.images != a.train.images);
  spec.test_images = 0;
  CHECK_FALSE(make_synthetic(spec).test.has_value());
}

TEST_CASE("truncate keeps the first images") {
  SyntheticSpec spec;
  spec.train_images = 10;
  spec.test_images = 0;
  DataSplit split = make_synthetic(spec);
  const std::vector<std::int32_t> first(split.train.labels.begin(), split.train.labels.begin() + 4);
  split.train.truncate(4);
  CHECK(split.train.size() == 4);
  CHECK(split.train.labels == first);
  CHECK(split.train.images.size() == 4 * 784);
  split.train.truncate(100);  // a limit above the size changes nothing
  CHECK(split.train.size() == 4);
}

TEST_CASE("shapes parse as CxHxW") {
  CHECK(parse_shape("1x28x28") == Shape{1, 28, 28});
  CHECK(parse_shape("3X32x32") == Shape{3, 32, 32});
  CHECK(to_string(Shape{3, 32, 32}) == "3x32x32");
  for (const char* bad : {"", "28x28", "1x28x28x1", "0x28x28", "1x-2x3", "ax28x28", "1x28x"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shape(bad), UsageError);
  }
}
