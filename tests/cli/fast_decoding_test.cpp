// csan-generate --precision bf16|int8 and --shortlist end to end: a tiny model trained
// briefly on the toy corpus, a shortlist built from its training data by
// build-shortlist, every precision with and without the shortlist against fp32, and
// the one-line errors of the new options.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using csan::testing::bin;
using csan::testing::run;
using csan::testing::RunResult;
using csan::testing::tool;

namespace {

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }

bool is_one_line(const std::string& text) {
  return !text.empty() && std::count(text.begin(), text.end(), '\n') == 1 && text.back() == '\n';
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class FastDecodingCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // generate_test.cpp's training (4,000 pairs, 4 epochs): enough for the model to
    // translate (BLEU well above an untrained model's), so agreement means something.
    dir_ = csan::testing::shared_fixture("fast_decoding_cli", [](const std::string& dir) {
      const std::string data = csan::testing::make_toy_data_in(dir, 4000, 100, 1);
      auto train = run({bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml", "--data",
                        data, "--save-dir", dir + "/ckpt", "--max-epoch", "4", "--max-tokens", "1024", "--set",
                        "lr_scheduler.warmup_updates=60"});
      ASSERT_EQ(train.exit_code, 0) << describe(train);
      auto shortlist = run({tool("build-shortlist"), "--data", data, "-s", "src", "-t", "tgt", "--top-k", "20",
                            "--frequent", "30", "--output", dir + "/shortlist.txt"});
      ASSERT_EQ(shortlist.exit_code, 0) << describe(shortlist);
    });
    data_ = dir_ + "/bin";
    checkpoint_ = dir_ + "/ckpt/checkpoint_last.pt";
  }

  static RunResult generate(std::vector<std::string> args) {
    std::vector<std::string> argv = {bin("csan-generate"), "--path", checkpoint_,       "--data", data_,
                                     "--gen-subset",       "valid",  "--output-format", "plain"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }

  static double bleu_of(const RunResult& r) {
    std::smatch m;
    if (!std::regex_search(r.err, m, std::regex(R"(BLEU = ([0-9.]+))"))) return -1;
    return std::stod(m[1]);
  }

  static std::string data_, dir_, checkpoint_;
};

std::string FastDecodingCli::data_, FastDecodingCli::dir_, FastDecodingCli::checkpoint_;

// The toy model's translations in bf16 and int8, with and without the shortlist, stay
// those of fp32 on most sentences, and BLEU within 2 points (the toy valid set has 100
// sentences: one changed sentence can move BLEU by about 1).
TEST_F(FastDecodingCli, ReducedPrecisionsAndShortlistTranslateLikeFp32) {
  auto fp32 = generate({});
  ASSERT_EQ(fp32.exit_code, 0) << describe(fp32);
  const double reference_bleu = bleu_of(fp32);
  ASSERT_GT(reference_bleu, 5.0) << fp32.err;
  const auto reference = lines_of(fp32.out);
  ASSERT_EQ(reference.size(), 100u);
  EXPECT_EQ(lines_of(generate({"--cpu"}).out), reference);  // on a machine without a GPU, the CPU was the default
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--precision", "bf16"},
                                             {"--precision", "int8"},
                                             {"--shortlist", dir_ + "/shortlist.txt"},
                                             {"--precision", "int8", "--shortlist", dir_ + "/shortlist.txt"},
                                             {"--precision", "int8", "--quantize-skip", "decoder.layers.0"}}) {
    std::string name;
    for (const auto& a : args) name += a + " ";
    auto r = generate(args);
    ASSERT_EQ(r.exit_code, 0) << name << describe(r);
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), reference.size()) << name;
    size_t same = 0;
    for (size_t i = 0; i < lines.size(); ++i) same += lines[i] == reference[i];
    // int8 moved 25 of the 100 toy translations (bf16 and the shortlist fewer than 20),
    // most by a token or two; BLEU barely moves.
    const bool int8 = std::find(args.begin(), args.end(), "int8") != args.end();
    EXPECT_GE(same, int8 ? 65u : 80u) << name;
    EXPECT_NEAR(bleu_of(r), reference_bleu, 2.0) << name << r.err;
    if (args[0] == "--precision") {
      EXPECT_NE(r.err.find("precision " + args[1] + ": "), std::string::npos) << r.err;
    }
    if (args[1] == "int8") {
      EXPECT_NE(r.err.find("int8 products: "), std::string::npos) << r.err;
    }
  }
}

// An ensemble converts every member: two copies of one model in int8 translate as the
// model alone does (the mean of equal distributions is the distribution).
TEST_F(FastDecodingCli, EnsemblesConvertEveryMember) {
  const std::string copy = dir_ + "/copy.pt";
  fs::copy_file(checkpoint_, copy, fs::copy_options::overwrite_existing);
  auto single = generate({"--precision", "int8", "--shortlist", dir_ + "/shortlist.txt"});
  auto ensemble =
      run({bin("csan-generate"), "--path", checkpoint_ + ":" + copy, "--data", data_, "--gen-subset", "valid",
           "--output-format", "plain", "--precision", "int8", "--shortlist", dir_ + "/shortlist.txt"});
  ASSERT_EQ(ensemble.exit_code, 0) << describe(ensemble);
  const auto a = lines_of(single.out), b = lines_of(ensemble.out);
  ASSERT_EQ(a.size(), b.size());
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  EXPECT_GE(same, 95u) << "log-sum-exp of equal terms may round a near-tie the other way";
}

TEST_F(FastDecodingCli, BadPrecisionsSkipsAndShortlistsAreOneLineErrors) {
  auto expect_error = [](const RunResult& r, const std::string& text) {
    EXPECT_NE(r.exit_code, 0) << text;
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  };
  expect_error(generate({"--precision", "fp16"}), "--precision: fp16 needs a CUDA device");
  expect_error(generate({"--precision", "amp"}), "--precision: amp is for training");
  expect_error(generate({"--precision", "int3"}), "--precision: unknown value 'int3'");
  expect_error(generate({"--precision", "int8", "--quantize-skip", "decoder.layer"}),
               "--quantize-skip: 'decoder.layer' names no projection");
  const std::string corrupt = dir_ + "/corrupt.txt";
  std::ifstream good(dir_ + "/shortlist.txt");
  std::string first_lines, line;
  for (int i = 0; i < 5 && std::getline(good, line); ++i) first_lines += line + "\n";
  std::ofstream(corrupt) << first_lines;
  expect_error(generate({"--shortlist", corrupt}), corrupt + ":6: ends before the candidates of source id 1");
  expect_error(generate({"--shortlist", dir_ + "/absent.txt"}), "absent.txt: cannot open shortlist");
  expect_error(run({tool("build-shortlist"), "--data", dir_ + "/nowhere", "-s", "src", "-t", "tgt", "--output",
                    dir_ + "/x.txt"}),
               "train.src-tgt.src.idx: not found");
  EXPECT_FALSE(fs::exists(dir_ + "/x.txt"));
}

// convert-checkpoint's int8 and bf16 files: smaller than the training checkpoint, they
// decode exactly as converting at load does, and training refuses them in one line.
TEST_F(FastDecodingCli, ConvertedCheckpointsAreSmallerDecodeAsConvertedAtLoadAndTrainingRefusesThem) {
  for (const std::string precision : {"int8", "bf16"}) {
    const std::string converted = dir_ + "/model." + precision + ".pt";
    auto convert =
        run({tool("convert-checkpoint"), "--input", checkpoint_, "--output", converted, "--precision", precision});
    ASSERT_EQ(convert.exit_code, 0) << describe(convert);
    EXPECT_LT(fs::file_size(converted), fs::file_size(checkpoint_) / 2) << "no optimizer state, smaller weights";
    auto at_load = generate({"--precision", precision});
    auto direct = run({bin("csan-generate"), "--path", converted, "--data", data_, "--gen-subset", "valid",
                       "--output-format", "plain"});
    ASSERT_EQ(direct.exit_code, 0) << describe(direct);
    EXPECT_EQ(direct.out, at_load.out) << precision;
    // It decodes in its own precision, and says so as converting at load does.
    EXPECT_NE(direct.err.find("precision " + precision + ": "), std::string::npos) << direct.err;
    const std::string other = precision == "int8" ? "bf16" : "int8";
    auto mismatched = run(
        {bin("csan-generate"), "--path", converted, "--data", data_, "--gen-subset", "valid", "--precision", other});
    EXPECT_NE(mismatched.exit_code, 0);
    EXPECT_TRUE(is_one_line(mismatched.err)) << mismatched.err;
    EXPECT_NE(mismatched.err.find("--precision " + other + ": " + converted + " is an inference-only " + precision),
              std::string::npos)
        << mismatched.err;
    // Its layers were kept fp32 (or not) when it was written: another --quantize-skip cannot apply.
    auto skipped = run({bin("csan-generate"), "--path", converted, "--data", data_, "--gen-subset", "valid",
                        "--precision", precision, "--quantize-skip", "decoder.layers.0"});
    EXPECT_NE(skipped.exit_code, 0);
    EXPECT_TRUE(is_one_line(skipped.err)) << skipped.err;
    EXPECT_NE(skipped.err.find("--quantize-skip: " + converted +
                               " is an inference-only checkpoint written with no --quantize-skip"),
              std::string::npos)
        << skipped.err;
    auto train =
        run({bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml", "--data", data_,
             "--save-dir", dir_ + "/resumed-" + precision, "--restore-file", converted, "--max-epoch", "4"});
    EXPECT_NE(train.exit_code, 0);
    EXPECT_TRUE(is_one_line(train.err)) << train.err;
    EXPECT_NE(train.err.find("an inference-only " + precision + " checkpoint"), std::string::npos) << train.err;
  }
  auto bad =
      run({tool("convert-checkpoint"), "--input", checkpoint_, "--output", dir_ + "/x.pt", "--precision", "fp16"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_TRUE(is_one_line(bad.err)) << bad.err;
  EXPECT_NE(bad.err.find("--precision"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ + "/x.pt"));
}

}  // namespace
