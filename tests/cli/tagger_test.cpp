// The convoluted-attention tagger through the four executables on a small generated
// treebank (tests/support/toy_treebank.h): csan-preprocess --task tagging (convatt
// protocol), csan-train with every recipes/tagger-*.yaml (one Table 2 row each, shrunk to
// tiny dimensions and two epochs), csan-generate --input FILE.conllu, csan-score --task
// tagging; and every bad input of the tagging paths as one error line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "tests/support/text_files.h"
#include "tests/support/toy_treebank.h"

namespace fs = std::filesystem;
using csan::testing::slurp;
using namespace csan::testing;

namespace {

struct Treebank {
  std::string dir, data;
  std::string file(const std::string& split) const { return dir + "/" + split + ".conllu"; }
  std::string prefix(const std::string& split) const { return dir + "/" + split; }
};

const Treebank& treebank() {
  static const Treebank bank = [] {
    Treebank t;
    t.dir = make_temp_dir("tagger_treebank");
    ToyTreebank generator(7);
    std::ofstream(t.file("train")) << generator.conllu(150, 50);
    std::ofstream(t.file("dev")) << generator.conllu(30, 15);
    std::ofstream(t.file("test")) << generator.conllu(30, 10);
    t.data = t.dir + "/data";
    auto r = run({bin("csan-preprocess"), "--task", "tagging", "--vocab-protocol", "convatt", "--trainpref",
                  t.prefix("train"), "--validpref", t.prefix("dev"), "--testpref", t.prefix("test"), "--destdir",
                  t.data, "--word-chars", "12"});
    if (r.exit_code != 0) throw std::runtime_error("csan-preprocess failed: " + r.err);
    return t;
  }();
  return bank;
}

std::string recipe(const std::string& name) { return std::string(CSAN_SOURCE_DIR) + "/recipes/" + name; }

bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

// Tiny dimensions and two epochs: seconds per variant.
const std::vector<std::string> kTiny = {"--set", "model.tagger.word_dim=16",    "--set", "model.tagger.char_dim=8",
                                        "--set", "model.tagger.char_filters=8", "--set", "model.tagger.layers=2",
                                        "--set", "model.tagger.heads=2",        "--set", "optimization.lr=0.005",
                                        "--set", "dataset.max_sentences=16"};

RunResult train(const std::string& recipe_name, const std::string& save_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {bin("csan-train"), recipe(recipe_name), "--data",
                                   treebank().data,   "--save-dir",        save_dir};
  args.insert(args.end(), kTiny.begin(), kTiny.end());
  if (std::find(extra.begin(), extra.end(), "--max-epoch") == extra.end())
    args.insert(args.end(), {"--max-epoch", "2"});
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

TEST(Tagger, PreprocessWritesTheTaggingDataDirectory) {
  const auto& t = treebank();
  for (const char* f : {"dict.words.txt", "dict.chars.txt", "dict.labels.txt", "train.words.bin", "train.chars.idx",
                        "valid.labels.idx", "test.words.idx", "preprocess.json"})
    EXPECT_TRUE(fs::exists(t.data + "/" + f)) << f;
  const std::string labels = slurp(t.data + "/dict.labels.txt");
  EXPECT_EQ(labels.rfind("<PAD> 0\n<OOV> 0\n", 0), 0u) << labels;
  EXPECT_NE(labels.find("\nPRON "), std::string::npos);
  EXPECT_NE(slurp(t.data + "/preprocess.json").find("\"vocab_protocol\": \"convatt\""), std::string::npos);
}

// Every Table 2 row (and R's circulant form) trains, tags the test file and is scored.
TEST(Tagger, EveryVariantTrainsTagsAndScoresThroughTheFourExecutables) {
  const auto& t = treebank();
  struct Variant {
    std::string recipe;
    std::vector<std::string> extra;
  };
  const std::vector<Variant> variants = {
      {"tagger-san.yaml", {}},    {"tagger-pe-add.yaml", {}},
      {"tagger-pe-con.yaml", {}}, {"tagger-p.yaml", {}},
      {"tagger-r.yaml", {}},      {"tagger-r.yaml", {"--set", "model.relative_bias.form=circulant"}},
      {"tagger-p-r.yaml", {}},    {"tagger-temp.yaml", {}},
      {"tagger-conv.yaml", {}},   {"tagger-conv2d.yaml", {}}};
  for (const auto& v : variants) {
    const std::string name = v.recipe + (v.extra.empty() ? "" : " (circulant)");
    const std::string save = make_temp_dir("tagger_" + v.recipe + std::to_string(v.extra.size()));
    auto r = train(v.recipe, save, v.extra);
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    EXPECT_NE(r.err.find("accuracy"), std::string::npos) << name << "\n" << r.err;
    ASSERT_TRUE(fs::exists(save + "/checkpoint_best.pt")) << name;

    r = run({bin("csan-generate"), "--path", save + "/checkpoint_best.pt", "--input", t.file("test")});
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    EXPECT_NE(r.err.find("tagged 30 sentences"), std::string::npos) << r.err;
    const std::string system = save + "/test.tagged.conllu";
    std::ofstream(system) << r.out;

    r = run({bin("csan-score"), "--task", "tagging", t.file("test"), "-i", system, "--train", t.file("train")});
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.err;
    const auto json = nlohmann::json::parse(r.out);
    const auto& scores = json["systems"][0];
    for (const char* metric : {"accuracy", "oov_accuracy", "ambiguous_accuracy"}) {
      const double score = scores[metric]["score"].get<double>();
      EXPECT_GE(score, 0.0) << name << " " << metric;
      EXPECT_LE(score, 100.0) << name << " " << metric;
    }
    EXPECT_GT(json["oov_words"].get<int>(), 0);
    EXPECT_GT(json["ambiguous_words"].get<int>(), 0);
    // Two epochs of the toy grammar already beat chance (about 1 in 9 tags) by far.
    EXPECT_GT(scores["accuracy"]["score"].get<double>(), 40.0) << name;
  }
}

// XPOS as the learned column; csan-generate writes it there; two systems with the
// paired bootstrap in text; the paper's OOV definition through the word vocabulary.
TEST(Tagger, XposGenerationAndPairedBootstrap) {
  const auto& t = treebank();
  const std::string data = make_temp_dir("tagger_xpos") + "/data";
  auto r = run({bin("csan-preprocess"), "--task", "tagging", "--tag-column", "xpos", "--trainpref", t.prefix("train"),
                "--validpref", t.prefix("dev"), "--destdir", data});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string save = make_temp_dir("tagger_xpos_run");
  r = run({bin("csan-train"), recipe("tagger-conv2d.yaml"), "--data", data, "--save-dir", save, "--max-epoch", "1",
           "--set", "model.tagger.layers=1", "--set", "model.tagger.heads=2", "--set", "model.tagger.word_dim=16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run({bin("csan-generate"), "--path", save + "/checkpoint_best.pt", "--input", "-"}, slurp(t.file("test")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("(xpos)"), std::string::npos) << r.err;
  // UPOS stays as it was; XPOS holds the predictions.
  std::istringstream in(r.out), gold(slurp(t.file("test")));
  int upos_changed = 0, lines = 0;
  for (std::string a, b; std::getline(in, a) && std::getline(gold, b); ++lines) {
    auto column = [](const std::string& line, int c) {
      std::istringstream fields(line);
      std::string f;
      for (int i = 0; i <= c && std::getline(fields, f, '\t'); ++i) {
      }
      return f;
    };
    if (a.empty() || a[0] == '#' || a.find('-') < a.find('\t')) continue;
    upos_changed += column(a, 3) != column(b, 3);
  }
  EXPECT_GT(lines, 100);
  EXPECT_EQ(upos_changed, 0);
  const std::string system = save + "/xpos.conllu";
  std::ofstream(system) << r.out;

  r = run({bin("csan-score"), "--task", "tagging", t.file("test"), "-i", t.file("test"), system, "--paired-bs",
           "--paired-bs-n", "100", "--tag-column", "xpos", "--train", t.file("train"), "--vocab",
           t.data + "/dict.words.txt", "-f", "text"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OOV (form not in " + t.data + "/dict.words.txt)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(p = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("100.00 (μ = 100.00"), std::string::npos) << r.out;  // the reference as baseline
}

TEST(Tagger, BadInputIsOneErrorLine) {
  const auto& t = treebank();
  const std::string dir = make_temp_dir("tagger_errors");
  std::ofstream(dir + "/bad.conllu") << "1\tthe\t_\tDET\n";
  struct Case {
    std::vector<std::string> argv;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{bin("csan-preprocess"), "--task", "tagging", "--trainpref", dir + "/bad", "--destdir", dir + "/d"},
       dir + "/bad.conllu:1: 4 tab-separated columns"},
      {{bin("csan-preprocess"), "--task", "tagging", "--trainpref", dir + "/none", "--destdir", dir + "/d"},
       dir + "/none.conllu"},
      {{bin("csan-preprocess"), "--task", "tagging", "--vocab-protocol", "paper", "--trainpref", t.prefix("train")},
       "'paper' is not a vocabulary protocol"},
      {{bin("csan-preprocess"), "--task", "tagging", "--tag-column", "lemma", "--trainpref", t.prefix("train")},
       "'lemma' is not a tag column"},
      {{bin("csan-preprocess"), "--task", "tagging", "--source-lang", "de", "--trainpref", t.prefix("train")},
       "--source-lang: not an option of --task tagging"},
      {{bin("csan-preprocess"), "--task", "tagging", "--vocab-protocol", "convatt", "--word-threshold", "3",
        "--trainpref", t.prefix("train"), "--validpref", t.prefix("dev"), "--testpref", t.prefix("test")},
       "--word-threshold: only for --vocab-protocol standard"},
      {{bin("csan-preprocess"), "--task", "parsing"}, "unknown task 'parsing'; known: multilingual_translation, tagging, translation"},
      {{bin("csan-score"), "--task", "parsing", t.file("test")}, "unknown task 'parsing'; known: multilingual_translation, tagging, translation"},
      {{bin("csan-preprocess"), "--tag-column", "xpos", "-s", "de", "-t", "en", "--trainpref", "x"},
       "--tag-column: not an option of --task translation"},
      {{bin("csan-train"), recipe("tagger-p.yaml"), "--data", dir, "--save-dir", dir + "/s"},
       dir + "/preprocess.json: missing (not a directory written by csan-preprocess)"},
      {{bin("csan-generate"), "--path", dir + "/missing.pt", "--input", t.file("test")}, dir + "/missing.pt"},
      {{bin("csan-score"), "--task", "tagging", t.file("test"), "-i", t.file("dev")}, t.file("dev") + ":"},
      {{bin("csan-score"), "--task", "tagging", t.file("test")}, "missing -i SYS.conllu"},
      {{bin("csan-score"), "--task", "tagging", t.file("test"), "-i", dir + "/bad.conllu"}, dir + "/bad.conllu:1:"},
      {{bin("csan-score"), "--task", "tagging", t.file("test"), "-i", t.file("test"), "--vocab", "v"},
       "--vocab needs --train"},
      {{bin("csan-score"), "--task", "tagging", t.file("test"), "-i", t.file("test"), "-f", "latex"},
       "--format: 'latex'"},
      {{bin("csan-score"), "--task", "tagging", t.file("test"), "-i", t.file("test"), "--paired-bs"},
       "--paired-bs compares systems"},
  };
  for (const auto& c : cases) {
    auto r = run(c.argv);
    EXPECT_NE(r.exit_code, 0) << c.expected;
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << "expected '" << c.expected << "' in: " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/d")) << "a failed preprocess leaves nothing behind";
}

// An option of the other task, given on the command line (not one left at its default),
// is refused before anything is read or written: exit 1 and one line naming the option
// and the task.
TEST(Tagger, OptionsOfTheOtherTaskAreRefusedNamingTheOptionAndTheTask) {
  const auto& t = treebank();
  const std::string dir = make_temp_dir("tagger_foreign_options");
  const std::vector<std::string> preprocess_tagging = {bin("csan-preprocess"), "--task",    "tagging", "--trainpref",
                                                       t.prefix("train"),      "--destdir", dir + "/d"};
  const std::vector<std::string> preprocess_translation = {
      bin("csan-preprocess"), "-s", "de", "-t", "en", "--trainpref", dir + "/none", "--destdir", dir + "/d"};
  const std::vector<std::string> score_tagging = {bin("csan-score"), "--task", "tagging",
                                                  t.file("test"),    "-i",     t.file("test")};
  const std::vector<std::string> score_translation = {bin("csan-score"), t.file("test"), "-i", t.file("test")};
  struct Case {
    std::vector<std::string> command, extra;
    std::string line;
  };
  const std::vector<Case> cases = {
      {preprocess_tagging,
       {"--source-lang", "de"},
       "csan-preprocess: error: --source-lang: not an option of --task tagging"},
      {preprocess_tagging, {"-t", "en"}, "csan-preprocess: error: --target-lang: not an option of --task tagging"},
      {preprocess_tagging,
       {"--spm-vocab-size", "100"},
       "csan-preprocess: error: --spm-vocab-size: not an option of --task tagging"},
      {preprocess_tagging,
       {"--joined-dictionary"},
       "csan-preprocess: error: --joined-dictionary: not an option of --task tagging"},
      {preprocess_translation,
       {"--tag-column", "xpos"},
       "csan-preprocess: error: --tag-column: not an option of --task translation"},
      {preprocess_translation,
       {"--vocab-protocol", "convatt"},
       "csan-preprocess: error: --vocab-protocol: not an option of --task translation"},
      {preprocess_translation,
       {"--chunk-length", "30"},
       "csan-preprocess: error: --chunk-length: not an option of --task translation"},
      {score_tagging, {"--tokenize", "13a"}, "csan-score: error: --tokenize: not an option of --task tagging"},
      {score_tagging, {"-tok", "intl"}, "csan-score: error: --tokenize: not an option of --task tagging"},
      {score_tagging, {"-m", "chrf"}, "csan-score: error: --metrics: not an option of --task tagging"},
      {score_tagging, {"-lc"}, "csan-score: error: --lowercase: not an option of --task tagging"},
      {score_tagging, {"--confidence"}, "csan-score: error: --confidence: not an option of --task tagging"},
      {score_tagging, {"--paired-ar"}, "csan-score: error: --paired-ar: not an option of --task tagging"},
      {score_translation,
       {"--train", t.file("train")},
       "csan-score: error: --train: not an option of --task translation"},
      {score_translation,
       {"--tag-column", "xpos"},
       "csan-score: error: --tag-column: not an option of --task translation"},
      {score_translation, {"--vocab", "v"}, "csan-score: error: --vocab: not an option of --task translation"},
  };
  for (const auto& c : cases) {
    auto argv = c.command;
    argv.insert(argv.end(), c.extra.begin(), c.extra.end());
    const auto r = run(argv);
    EXPECT_EQ(r.exit_code, 1) << c.line << "\n" << r.err;
    EXPECT_EQ(r.err, c.line + "\n");
    EXPECT_EQ(r.out, "") << c.line;
  }
  EXPECT_FALSE(fs::exists(dir + "/d")) << "a refused preprocess writes nothing";
}

// A tagging checkpoint with --data, and translation data given to the tagging task.
TEST(Tagger, TaskMismatchesAreOneErrorLine) {
  const auto& t = treebank();
  const std::string save = make_temp_dir("tagger_mismatch");
  auto r = train("tagger-san.yaml", save, {"--max-epoch", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string checkpoint = save + "/checkpoint_best.pt";
  r = run({bin("csan-generate"), "--path", checkpoint});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("give --input FILE.conllu"), std::string::npos) << r.err;
  // The options of translation checkpoints, given with a tagging one: exit 1 and one line
  // naming the option and the task, before anything is loaded or written.
  const std::vector<std::pair<std::vector<std::string>, std::string>> translation_options = {
      {{"--data", t.data}, "--data"},
      {{"--beam", "2"}, "--beam"},
      {{"--nbest", "2"}, "--nbest"},
      {{"--lenpen", "1.5"}, "--lenpen"},
      {{"--precision", "int8"}, "--precision"},
      {{"--shortlist", "list.txt"}, "--shortlist"},
      {{"--sampling"}, "--sampling"},
      {{"--sampling-topk", "3"}, "--sampling-topk"},
      {{"--temperature", "0.5"}, "--temperature"},
      {{"--cpu"}, "--cpu"},
      {{"--output-format", "plain"}, "--output-format"},
      {{"-s", "de"}, "--source-lang"}};
  for (const auto& [extra, option] : translation_options) {
    std::vector<std::string> argv = {bin("csan-generate"), "--path",         checkpoint,   "--input",
                                     t.file("test"),       "--results-path", save + "/out"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    r = run(argv);
    EXPECT_EQ(r.exit_code, 1) << option << "\n" << r.err;
    EXPECT_EQ(r.err, "csan-generate: error: " + option + ": not an option of task tagging (" + checkpoint +
                         " is a tagging checkpoint)\n");
    EXPECT_EQ(r.out, "") << option;
  }
  EXPECT_FALSE(fs::exists(save + "/out")) << "a refused generation writes nothing";
  // Its own options still work: the same file tagged in batches of 4 chunks into a file.
  r = run({bin("csan-generate"), "--path", checkpoint, "--input", t.file("test"), "--batch-size", "4", "--results-path",
           save + "/out", "--threads", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(save + "/out/generate-input.conllu"));
  const std::string translation = make_toy_data("tagger_translation_data", 50, 10, 1);
  r = run({bin("csan-train"), recipe("tagger-san.yaml"), "--data", translation, "--save-dir", save + "/x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("not tagging data"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(save + "/x"));
}

}  // namespace
