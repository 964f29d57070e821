// Runs an executable for end-to-end tests and captures its exit code and output.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace csan::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `argv` (argv[0] is a path) with optional stdin contents, extra environment
// entries ("NAME=value"; a bare "NAME" removes NAME) and working directory; never throws
// on a non-zero exit.
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
// The same in the existing directory `dir`.
std::string make_toy_data_in(const std::string& dir, int train, int valid, int seed, int max_words = 20);

// The fixture of a test suite, made once and shared by every test process: ctest runs each
// test in a process of its own, and rebuilding a suite's corpus and trained model in each
// one cost minutes of every run. `make` fills a directory under the build tree the first
// time this build (the executables and this test binary, by modification time) asks for
// `name`; concurrent processes wait for it on a lock. Returns a fresh directory private to
// this process in which each entry of the shared one appears as a symbolic link, so tests
// write their own files beside the shared ones without changing them. A `make` that fails
// (a fatal gtest failure) leaves nothing for the next process to reuse.
std::string shared_fixture(const std::string& name, const std::function<void(const std::string& dir)>& make);

}  // namespace csan::testing
