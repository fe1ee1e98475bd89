// Reads the pixels of an 8-bit RGB or RGBA, non-interlaced PNG (what headless Chromium writes), so
// that a rendering test can ask what is on the page, not only that a file exists. zlib inflates.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalebench::test {

struct PngImage {
  std::uint32_t width = 0, height = 0;
  int channels = 0;                  // 3 (RGB) or 4 (RGBA)
  std::vector<std::uint8_t> pixels;  // row-major, `channels` bytes per pixel
  const std::uint8_t* at(std::uint32_t x, std::uint32_t y) const {
    return &pixels[(static_cast<std::size_t>(y) * width + x) * static_cast<std::size_t>(channels)];
  }
};

inline PngImage read_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  const auto be32 = [&](std::size_t at) {
    return (std::uint32_t(file.at(at)) << 24) | (std::uint32_t(file.at(at + 1)) << 16) |
           (std::uint32_t(file.at(at + 2)) << 8) | std::uint32_t(file.at(at + 3));
  };
  static const std::uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (file.size() < 8 || !std::equal(signature, signature + 8, file.begin()))
    throw std::runtime_error(path + ": not a PNG file");
  PngImage image;
  std::vector<std::uint8_t> compressed;
  for (std::size_t at = 8; at + 8 <= file.size();) {
    const auto length = be32(at);
    const std::string type(file.begin() + static_cast<long>(at) + 4,
                           file.begin() + static_cast<long>(at) + 8);
    const std::size_t data = at + 8;
    if (type == "IHDR") {
      image.width = be32(data);
      image.height = be32(data + 4);
      const int depth = file.at(data + 8), colour = file.at(data + 9),
                interlace = file.at(data + 12);
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        throw std::runtime_error(path + ": only 8-bit RGB/RGBA non-interlaced PNGs are read");
      image.channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), file.begin() + static_cast<long>(data),
                        file.begin() + static_cast<long>(data + length));
    } else if (type == "IEND") {
      break;
    }
    at = data + length + 4;  // data and CRC
  }
  const std::size_t stride = static_cast<std::size_t>(image.width) * image.channels;
  std::vector<std::uint8_t> raw((stride + 1) * image.height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, compressed.data(), compressed.size()) != Z_OK ||
      size != raw.size())
    throw std::runtime_error(path + ": the image data do not inflate to its size");
  // Undo the per-row filters (PNG spec, section 9).
  image.pixels.resize(stride * image.height);
  const auto bpp = static_cast<std::size_t>(image.channels);
  for (std::uint32_t y = 0; y < image.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    const std::uint8_t* src = &raw[y * (stride + 1) + 1];
    std::uint8_t* row = &image.pixels[y * stride];
    const std::uint8_t* up = y ? &image.pixels[(y - 1) * stride] : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? row[i - bpp] : 0, b = up ? up[i] : 0,
                c = (up && i >= bpp) ? up[i - bpp] : 0;
      int value = src[i];
      switch (filter) {
        case 0:
          break;
        case 1:
          value += a;
          break;
        case 2:
          value += b;
          break;
        case 3:
          value += (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          value += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default:
          throw std::runtime_error(path + ": unknown PNG row filter");
      }
      row[i] = static_cast<std::uint8_t>(value);
    }
  }
  return image;
}

}  // namespace scalebench::test
