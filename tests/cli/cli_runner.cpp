#include "cli_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/text_files.h"

namespace csan::testing {

RunResult run(const std::vector<std::string>& argv, const std::string& stdin_data, const std::vector<std::string>& env,
              const std::string& cwd) {
  std::string dir = make_temp_dir("run");
  std::string in_path = dir + "/stdin", out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::ofstream(in_path, std::ios::binary) << stdin_data;
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int in = ::open(in_path.c_str(), O_RDONLY);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(127);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::filesystem::remove_all(dir);
  return r;
}

std::string bin(const std::string& name) { return std::string(CSAN_BIN_DIR) + "/" + name; }
std::string tool(const std::string& name) { return std::string(CSAN_TOOLS_DIR) + "/" + name; }
std::string shared_dir() { return CSAN_SHARED_DIR; }

std::string make_temp_dir(const std::string& name) {
  static int counter = 0;
  auto dir = std::filesystem::temp_directory_path() /
             ("csan_test_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string make_toy_data(const std::string& name, int train, int valid, int seed, int max_words) {
  return make_toy_data_in(make_temp_dir(name), train, valid, seed, max_words);
}

std::string make_toy_data_in(const std::string& d, int train, int valid, int seed, int max_words) {
  auto r = run({tool("csan-toy-corpus"), "--out-dir", d + "/raw", "--train", std::to_string(train), "--valid",
                std::to_string(valid), "--test", "10", "--seed", std::to_string(seed), "--max-words",
                std::to_string(max_words)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({bin("csan-preprocess"), "--source-lang", "src", "--target-lang", "tgt", "--trainpref", d + "/raw/train",
           "--validpref", d + "/raw/valid", "--destdir", d + "/bin", "--joined-dictionary", "--spm-vocab-size", "200"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return d + "/bin";
}

namespace {

// Modification times (ns) of the programs a fixture is made with, this test binary included.
std::string build_stamp() {
  uint64_t h = 1469598103934665603ull;
  for (const std::string& path : {bin("csan-preprocess"), bin("csan-train"), bin("csan-generate"), bin("csan-score"),
                                  tool("csan-toy-corpus"), std::string("/proc/self/exe")}) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;
    for (uint64_t v : {uint64_t(st.st_mtim.tv_sec), uint64_t(st.st_mtim.tv_nsec), uint64_t(st.st_size)})
      h = (h ^ v) * 1099511628211ull;
  }
  return std::to_string(h);
}

}  // namespace

std::string shared_fixture(const std::string& name, const std::function<void(const std::string& dir)>& make) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(CSAN_BIN_DIR).parent_path() / "test-fixtures";
  fs::create_directories(base);
  const fs::path shared = base / (name + "-" + build_stamp());
  const int lock = ::open((base / (name + ".lock")).c_str(), O_RDWR | O_CREAT, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) throw std::runtime_error("cannot lock the fixture " + name);
  if (!fs::exists(shared / ".complete")) {
    for (const auto& entry : fs::directory_iterator(base))  // fixtures of earlier builds
      if (entry.is_directory() && entry.path().filename().string().rfind(name + "-", 0) == 0)
        fs::remove_all(entry.path());
    fs::create_directories(shared);
    make(shared.string());
    if (!::testing::Test::HasFatalFailure()) std::ofstream(shared / ".complete");
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  const std::string own = make_temp_dir(name);
  for (const auto& entry : fs::directory_iterator(shared))
    if (entry.path().filename() != ".complete")
      fs::create_symlink(entry.path(), fs::path(own) / entry.path().filename());
  return own;
}

}  // namespace csan::testing
