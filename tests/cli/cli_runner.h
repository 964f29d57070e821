// Runs an executable for end-to-end tests and captures its exit code and output.
#pragma once

#include <string>
#include <vector>

namespace csan::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `argv` (argv[0] is a path) with optional stdin contents, extra environment
// entries ("NAME=value") and working directory; never throws on a non-zero exit.
RunResult run(const std::vector<std::string>& argv, const std::string& stdin_data = "",
              const std::vector<std::string>& env = {}, const std::string& cwd = "");

// Path of a built executable: bin("csan-score") -> <build>/cli/csan-score.
std::string bin(const std::string& name);
// Path of a built tool program: tool("csan-toy-corpus") -> <build>/tools/csan-toy-corpus.
std::string tool(const std::string& name);
// ../shared beside the source tree.
std::string shared_dir();
// A fresh empty directory under the system temp dir, unique to this process and name.
std::string make_temp_dir(const std::string& name);
// A toy corpus (csan-toy-corpus, `seed`, sentences of at most `max_words` words; raw
// files in DIR/raw) with its train and valid splits binarized by csan-preprocess (joined
// 200-piece SentencePiece vocabulary) into DIR/bin, DIR a fresh directory named `name`;
// returns DIR/bin. Failures are test failures.
std::string make_toy_data(const std::string& name, int train, int valid, int seed, int max_words = 20);

}  // namespace csan::testing
