// The multilingual_translation task end to end on the multilingual toy: three directions
// (src -> tgt, tgt -> src, src -> tgu, where tgu is a second target language with words of
// its own) preprocessed into one joint dictionary, one tiny model trained on all three, the
// target-language token steering its output, and per-pair validation in metrics.jsonl.
// Bad values of every new option are one-line errors naming it (no training needed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

const char* kPairs = "src-tgt,tgt-src,src-tgu";

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }

void make_toy(const std::string& dir) {
  const auto r = run({tool("csan-toy-corpus"), "--out-dir", dir + "/raw", "--train", "800", "--valid", "20", "--test",
                      "20", "--seed", "3", "--max-words", "6", "--second-target-lang", "tgu"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
}

RunResult preprocess(const std::string& dir, const std::string& pairs, const std::string& destdir) {
  return run({bin("csan-preprocess"), "--task", "multilingual_translation", "--lang-pairs", pairs, "--trainpref",
              dir + "/raw/train", "--validpref", dir + "/raw/valid", "--destdir", destdir, "--spm-vocab-size", "400"});
}

std::vector<std::string> train_args(const std::string& data, const std::string& save_dir, const std::string& pairs) {
  return {bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
          "--set",           "task.name=multilingual_translation",
          "--lang-pairs",    pairs,
          "--data",          data,
          "--save-dir",      save_dir,
          "--max-tokens",    "1024",
          "--set",           "lr_scheduler.warmup_updates=30"};
}

// The toy with its data binarized and one model trained for a few epochs on all pairs.
std::string trained() {
  return shared_fixture("multilingual", [](const std::string& dir) {
    make_toy(dir);
    auto r = preprocess(dir, kPairs, dir + "/bin");
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    auto args = train_args(dir + "/bin", dir + "/ckpt", kPairs);
    for (const char* a : {"--max-update", "200", "--sampling-temperature", "2"}) args.push_back(a);
    r = run(args);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    std::ofstream(dir + "/train.log") << r.err;
  });
}

std::set<std::string> words_of(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> words;
  for (std::string w; in >> w;)
    if (w != "." && w != "?" && w != ",") words.insert(w);
  return words;
}

// Share of the output words (punctuation aside) that are words of `own` and not of `other`.
double share_in(const std::string& output, const std::set<std::string>& own, const std::set<std::string>& other) {
  std::istringstream in(output);
  int total = 0, inside = 0;
  for (std::string w; in >> w;) {
    if (w == "." || w == "?" || w == ",") continue;
    ++total;
    inside += own.count(w) && !other.count(w);
  }
  return total ? double(inside) / total : 0.0;
}

TEST(Multilingual, LanguageTokenSteersOneModel) {
  const std::string dir = trained();
  const std::string raw = dir + "/raw/";
  const auto tgt = words_of(raw + "train.src-tgt.tgt"), tgu = words_of(raw + "train.src-tgu.tgu"),
             src = words_of(raw + "train.src-tgt.src");
  auto translate = [&](const std::string& input, const std::string& s, const std::string& t) {
    const auto r = run({bin("csan-generate"), "--path", dir + "/ckpt/checkpoint_last.pt", "--input", input,
                        "--source-lang", s, "--target-lang", t, "--output-format", "plain", "--beam", "2"});
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return r.out;
  };
  // The same sources, two target tokens: each output in its own target vocabulary (the
  // two share 3 of about 430 words), hardly a word of the other's. After 200 updates many
  // output words are still misspelt: they count in neither.
  const std::string to_tgt = translate(raw + "test.src-tgt.src", "src", "tgt");
  const std::string to_tgu = translate(raw + "test.src-tgt.src", "src", "tgu");
  EXPECT_GT(share_in(to_tgt, tgt, tgu), 0.5) << to_tgt;
  EXPECT_LT(share_in(to_tgt, tgu, tgt), 0.05) << to_tgt;
  EXPECT_GT(share_in(to_tgu, tgu, tgt), 0.5) << to_tgu;
  EXPECT_LT(share_in(to_tgu, tgt, tgu), 0.05) << to_tgu;
  // The reverse direction comes out in the source language.
  const std::string to_src = translate(raw + "test.src-tgt.tgt", "tgt", "src");
  EXPECT_GT(share_in(to_src, src, tgt), 0.5) << to_src;
  EXPECT_LT(share_in(to_src, tgt, src), 0.05) << to_src;
}

TEST(Multilingual, PerPairValidationInMetrics) {
  const std::string dir = trained();
  std::ifstream in(dir + "/ckpt/metrics.jsonl");
  int validations = 0;
  for (std::string line; std::getline(in, line);) {
    const auto record = nlohmann::json::parse(line);
    if (record.value("kind", "") != "valid") continue;
    ++validations;
    for (const std::string pair : {"src-tgt", "tgt-src", "src-tgu"}) {
      ASSERT_TRUE(record.contains("loss_" + pair)) << line;
      EXPECT_GT(record["loss_" + pair].get<double>(), 0.0) << line;
    }
    // The overall loss lies between the pairs' losses (a token-weighted mean of them).
    const double a = record["loss_src-tgt"], b = record["loss_tgt-src"], c = record["loss_src-tgu"];
    EXPECT_GE(record["loss"].get<double>(), std::min({a, b, c}) - 1e-6) << line;
    EXPECT_LE(record["loss"].get<double>(), std::max({a, b, c}) + 1e-6) << line;
  }
  EXPECT_GE(validations, 1);
  std::ifstream log(dir + "/train.log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("loss_src-tgu"), std::string::npos) << text;
  EXPECT_NE(text.find("sampling temperature 2"), std::string::npos) << text;
}

TEST(Multilingual, GenerateRefusesPairsNotInTheModel) {
  const std::string dir = trained();
  auto generate = [&](const std::vector<std::string>& langs) {
    std::vector<std::string> args = {bin("csan-generate"), "--path", dir + "/ckpt/checkpoint_last.pt", "--input",
                                     dir + "/raw/test.src-tgt.src"};
    args.insert(args.end(), langs.begin(), langs.end());
    return run(args);
  };
  auto expect_error = [](const RunResult& r, const std::string& needle) {
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  expect_error(generate({"--source-lang", "src", "--target-lang", "fr"}), "--target-lang: 'fr' is not a language");
  expect_error(generate({"--source-lang", "tgu", "--target-lang", "src"}), "tgu-src is not a pair");
  expect_error(generate({"--source-lang", "src"}), "--target-lang: required");
}

TEST(Multilingual, BadValuesAreOneLineErrors) {
  const std::string dir = make_temp_dir("multilingual_bad");
  make_toy(dir);
  auto expect_error = [](const RunResult& r, const std::string& needle) {
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  // csan-preprocess: a malformed and a repeated pair (the other bad lists: lang_pairs_test),
  // a pair without files.
  expect_error(preprocess(dir, "src-tgt,srctgu", dir + "/x"), "key 'lang-pairs': 'srctgu' is not a language pair");
  expect_error(preprocess(dir, "src-tgt,src-tgt", dir + "/x"), "key 'lang-pairs': 'src-tgt' is given twice");
  expect_error(preprocess(dir, "src-tgt,tgu-fr", dir + "/x"), "train.tgu-fr.tgu: no such file (pair tgu-fr");
  EXPECT_FALSE(fs::exists(dir + "/x"));
  // csan-train on data of two pairs: a language the data lacks, a pair it lacks, a
  // temperature that is not > 0 (the other values: lang_pairs_test).
  const auto r = preprocess(dir, "src-tgt,src-tgu", dir + "/bin");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto train = [&](const std::string& pairs, const std::vector<std::string>& extra = {}) {
    auto args = train_args(dir + "/bin", dir + "/ckpt", pairs);
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  };
  expect_error(train("src-tgt,src-fr"), "key 'task.lang_pairs': language 'fr' is not in");
  expect_error(train("src-tgt,tgt-src"), "train.tgt-src.tgt.idx: no such file");
  expect_error(train("src-tgt,src-tgu", {"--sampling-temperature", "0"}),
               "key 'task.sampling_temperature': must be a number > 0");
  EXPECT_FALSE(fs::exists(dir + "/ckpt/checkpoint_last.pt"));

  // --lang-tok-style decoder end to end: the target language's token is the decoder's
  // first input, so a model trained a few updates translates with --target-lang and no
  // hypothesis holds the token (that the decoder is given it and scores from it:
  // SequenceGenerator.DecoderStartTokenIsTheFirstInputNotAnOutput).
  const auto trained = train("src-tgt,src-tgu", {"--lang-tok-style", "decoder", "--max-update", "2", "--set",
                                                 "dataset.disable_validation=true"});
  ASSERT_EQ(trained.exit_code, 0) << describe(trained);
  EXPECT_NE(trained.err.find("language tokens on the decoder side"), std::string::npos) << trained.err;
  const auto generated =
      run({bin("csan-generate"), "--path", dir + "/ckpt/checkpoint_last.pt", "--input", dir + "/raw/test.src-tgt.src",
           "--source-lang", "src", "--target-lang", "tgu", "--beam", "2", "--max-len-a", "0", "--max-len-b", "6"});
  ASSERT_EQ(generated.exit_code, 0) << describe(generated);
  std::istringstream lines(generated.out);
  int hypotheses = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("H-", 0) != 0 && line.rfind("D-", 0) != 0) continue;
    const std::string text = line.substr(line.find('\t', line.find('\t') + 1) + 1);  // after the score
    EXPECT_NE(text.rfind("__tgu__", 0), 0u) << line;
    hypotheses += line[0] == 'H';
  }
  EXPECT_EQ(hypotheses, 20) << generated.out;
}

}  // namespace
