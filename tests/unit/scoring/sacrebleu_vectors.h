// Loads the sacreBLEU test vectors (../shared/vectors/sacrebleu) for the metric tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "toolkit/scoring/unicode.h"

namespace csan::scoring::testing {

inline std::string vectors_dir() { return std::string(CSAN_SHARED_DIR) + "/vectors/sacrebleu"; }

inline nlohmann::json load_vectors(const std::string& name) {
  std::ifstream in(vectors_dir() + "/" + name);
  if (!in) throw std::runtime_error("cannot open " + vectors_dir() + "/" + name);
  return nlohmann::json::parse(in);
}

// The lines of a file split on '\n' only (a final line without '\n' counts). sacreBLEU's
// command line also rstrips them (Python whitespace); the vectors' api_corpus values were
// computed on the lines without that rstrip, which only chrF with --chrf-whitespace can
// tell apart (BLEU and TER rstrip inside the metric, chrF otherwise drops whitespace).
inline std::vector<std::string> read_case_lines(const std::string& path, bool rstrip_lines = true) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    lines.push_back(rstrip_lines ? to_utf8(rstrip(to_u32(line))) : line);
    start = end + 1;
  }
  return lines;
}

}  // namespace csan::scoring::testing
