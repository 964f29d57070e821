// The helpers every target shares (fuzz_targets.h).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz_targets.h"

namespace csan::fuzz {

namespace fs = std::filesystem;

namespace {

// Removed at exit, so that a fuzzing session does not fill /dev/shm.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    path = base / ("csan_fuzz_" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

std::vector<std::string> split_at_nul(const uint8_t* data, size_t size, size_t max_pieces) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && pieces.size() < max_pieces) {
      pieces.emplace_back();
    } else {
      pieces.back().push_back(static_cast<char>(data[i]));
    }
  }
  return pieces;
}

std::string scratch_file(const std::string& name, std::string_view contents) {
  static ScratchDir dir;
  const std::string path = (dir.path / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) throw std::runtime_error(path + ": cannot write the fuzz input");
  return path;
}

}  // namespace csan::fuzz
