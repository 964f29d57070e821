#include "toolkit/generation/loaded_ensemble.h"

namespace csan::generation {

std::vector<std::string> split_paths(const std::string& joined) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (true) {
    const size_t colon = joined.find(':', start);
    std::string piece = joined.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!piece.empty()) paths.push_back(piece);
    if (colon == std::string::npos) return paths;
    start = colon + 1;
  }
}

}  // namespace csan::generation
