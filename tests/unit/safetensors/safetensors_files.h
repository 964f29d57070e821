// What the safetensors tests share: a scratch folder, files crafted byte by byte (a header
// text and a data region, as another writer or an attacker would make them) and reading
// files back.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace csan::testing {

inline std::filesystem::path safetensors_scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("csan-safetensors-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// The 8-byte little-endian length of `header`, the header, the data.
inline std::string safetensors_bytes(const std::string& header, const std::string& data = "") {
  const uint64_t length = header.size();
  std::string bytes(8, '\0');
  std::memcpy(bytes.data(), &length, 8);
  return bytes + header + data;
}

inline std::string write_bytes(const std::string& name, const std::string& bytes) {
  const auto path = safetensors_scratch(name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace csan::testing
