// Replays every stored fuzz input (tests/fuzz/corpus/TARGET/*: seeds and the inputs of
// crashes found by tools/fuzz.sh) through its target, compiled with the normal compiler:
// a crash that was fixed stays fixed. A test fails when anything but csan::Error escapes
// (the targets catch that) or an invariant breaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz_targets.h"

namespace fs = std::filesystem;

namespace {

// The torch-free targets, then the LibTorch ones (targets.txt's order).
const std::vector<csan::fuzz::NamedTarget>& replayed_targets() {
  static const std::vector<csan::fuzz::NamedTarget> targets = [] {
    std::vector<csan::fuzz::NamedTarget> all = csan::fuzz::all_targets();
    const auto& torch = csan::fuzz::torch_targets();
    all.insert(all.end(), torch.begin(), torch.end());
    return all;
  }();
  return targets;
}

struct StoredInput {
  std::string target;
  fs::path file;
};

std::vector<StoredInput> stored_inputs() {
  std::vector<StoredInput> inputs;
  for (const auto& target : replayed_targets()) {
    const fs::path dir = fs::path(CSAN_FUZZ_CORPUS_DIR) / target.name;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& file : files) inputs.push_back({target.name, file});
  }
  return inputs;
}

class FuzzReplay : public testing::TestWithParam<StoredInput> {};

TEST_P(FuzzReplay, InputIsHandled) {
  const StoredInput& input = GetParam();
  std::ifstream in(input.file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& target : replayed_targets()) {
    if (input.target != target.name) continue;
    try {
      target.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      FAIL() << input.file << ": " << e.what();
    }
  }
}

// Every target has stored inputs (at least its seeds).
TEST(FuzzCorpus, EveryTargetHasInputs) {
  const auto inputs = stored_inputs();
  for (const auto& target : replayed_targets())
    EXPECT_TRUE(std::any_of(inputs.begin(), inputs.end(), [&](const StoredInput& i) {
      return i.target == target.name;
    })) << target.name;
}

// tools/fuzz.sh and the fuzz build read the target names from targets.txt.
TEST(FuzzCorpus, TargetsFileNamesEveryTarget) {
  std::ifstream in(CSAN_FUZZ_TARGETS_FILE);
  std::vector<std::string> listed;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') listed.push_back(line);
  std::vector<std::string> defined;
  for (const auto& target : replayed_targets()) defined.push_back(target.name);
  EXPECT_EQ(listed, defined);
}

std::string test_name(const testing::TestParamInfo<StoredInput>& info) {
  std::string name = info.param.target + "_" + info.param.file.filename().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Stored, FuzzReplay, testing::ValuesIn(stored_inputs()), test_name);

}  // namespace
