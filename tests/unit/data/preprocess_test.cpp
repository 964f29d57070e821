#include "toolkit/data/preprocess.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/indexed_dataset.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/text/sentencepiece.h"
#include "toolkit/text/toy_corpus.h"

namespace fs = std::filesystem;
using namespace csan::data;

namespace {

fs::path work_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("csan_data_preprocess_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

const csan::text::ToyCorpus& toy() {
  static const csan::text::ToyCorpus corpus = [] {
    csan::text::ToyCorpusOptions o;
    o.train = 2000;
    o.valid = 100;
    o.test = 100;
    auto c = csan::text::generate_toy_corpus(o);
    csan::text::write_toy_corpus(c, (work_dir() / "raw").string(), "src", "tgt");
    return c;
  }();
  return corpus;
}

PreprocessOptions base_options(const std::string& destdir) {
  toy();
  PreprocessOptions o;
  o.source_lang = "src";
  o.target_lang = "tgt";
  std::string raw = (work_dir() / "raw").string();
  o.trainpref = {raw + "/train"};
  o.validpref = {raw + "/valid"};
  o.testpref = {raw + "/test"};
  o.destdir = (work_dir() / destdir).string();
  o.spm.vocab_size = 200;
  o.progress = false;
  return o;
}

std::map<std::string, std::string> directory_contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    files[entry.path().filename().string()] = csan::read_file(entry.path().string());
  return files;
}

// The text a binarized sequence stands for: ids -> pieces -> detokenized text.
std::string decode(const MMapIndexedDataset& ds, size_t i, const csan::text::Dictionary& dict,
                   const csan::text::SentencePieceModel& spm) {
  auto ids = ds.get(i);
  EXPECT_EQ(ids.back(), dict.eos());
  std::vector<std::string> pieces;
  for (size_t k = 0; k + 1 < ids.size(); ++k) pieces.push_back(dict.symbol(static_cast<int>(ids[k])));
  return spm.decode(pieces);
}

TEST(Preprocess, BinarizedSplitsDecodeBackToTheInput) {
  auto o = base_options("roundtrip");
  o.workers = 2;
  auto summary = preprocess(o);
  auto spm = csan::text::SentencePieceModel::load(o.destdir + "/spm.model");
  EXPECT_EQ(spm.vocab_size(), 200);
  const auto& splits = toy().splits;
  for (size_t s = 0; s < 3; ++s) {
    for (const char* lang : {"src", "tgt"}) {
      auto dict = csan::text::Dictionary::load(o.destdir + "/dict." + std::string(lang) + ".txt");
      EXPECT_EQ(dict.size() % 8, 0);
      MMapIndexedDataset ds(dataset_prefix(o.destdir, splits[s].name, "src", "tgt", lang));
      const auto& lines = std::string(lang) == "src" ? splits[s].source : splits[s].target;
      ASSERT_EQ(ds.size(), lines.size());
      for (size_t i = 0; i < lines.size(); ++i) ASSERT_EQ(decode(ds, i, dict, spm), lines[i]) << lang << i;
    }
  }
  ASSERT_EQ(summary.splits.size(), 6u);
  EXPECT_EQ(summary.splits[0].split, "train");
  EXPECT_EQ(summary.splits[0].lines, 2000);
  EXPECT_EQ(summary.splits[0].unknown, 0);
  EXPECT_EQ(summary.splits[3].split, "valid");
  EXPECT_EQ(summary.splits[3].lang, "tgt");
  EXPECT_EQ(summary.train_lines_read, 2000);
  EXPECT_EQ(summary.filtered.total(), 0);
  EXPECT_NE(summary.format().find("train      src"), std::string::npos) << summary.format();
  EXPECT_TRUE(fs::exists(o.destdir + "/preprocess.json"));
}

TEST(Preprocess, DictionaryCountsAreTheTrainingTokenCounts) {
  auto o = base_options("counts");
  auto summary = preprocess(o);
  for (const char* lang : {"src", "tgt"}) {
    auto dict = csan::text::Dictionary::load(o.destdir + "/dict." + std::string(lang) + ".txt");
    MMapIndexedDataset ds(dataset_prefix(o.destdir, "train", "src", "tgt", lang));
    std::vector<int64_t> seen(dict.size(), 0);
    for (size_t i = 0; i < ds.size(); ++i)
      for (int64_t id : ds.get(i)) ++seen[id];
    for (int id = dict.nspecial(); id < dict.size(); ++id) ASSERT_EQ(seen[id], dict.count(id)) << dict.symbol(id);
    // Most frequent first.
    for (int id = dict.nspecial() + 1; id < dict.size(); ++id) ASSERT_LE(dict.count(id), dict.count(id - 1));
  }
}

TEST(Preprocess, OutputDoesNotDependOnWorkers) {
  auto one = base_options("workers1");
  auto three = base_options("workers3");
  three.workers = 3;
  preprocess(one);
  preprocess(three);
  auto a = directory_contents(one.destdir), b = directory_contents(three.destdir);
  EXPECT_EQ(a.size(), 16u);  // spm, 2 dicts, 12 dataset files, settings
  EXPECT_TRUE(a == b);
}

TEST(Preprocess, RerunWithSameSettingsReplacesAndDifferentSettingsAreRefused) {
  auto o = base_options("rerun");
  preprocess(o);
  auto before = directory_contents(o.destdir);
  csan::write_file_atomically(o.destdir + "/dict.src.txt", "damaged 1\n");
  preprocess(o);
  EXPECT_TRUE(directory_contents(o.destdir) == before);

  auto changed = o;
  changed.spm.vocab_size = 150;
  try {
    preprocess(changed);
    FAIL() << "different settings accepted";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("different settings (spm_vocab_size: 200 there, 150 now)"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(directory_contents(o.destdir) == before);
  // Nothing but the destination itself is left beside it.
  for (const auto& entry : fs::directory_iterator(work_dir()))
    EXPECT_EQ(entry.path().filename().string().find("rerun.tmp"), std::string::npos) << entry.path();
}

TEST(Preprocess, RefusesToReplaceAForeignDirectory) {
  auto o = base_options("foreign");
  fs::create_directories(o.destdir);
  csan::write_file_atomically(o.destdir + "/notes.txt", "mine");
  EXPECT_THROW(preprocess(o), csan::Error);
  EXPECT_EQ(csan::read_file(o.destdir + "/notes.txt"), "mine");
}

TEST(Preprocess, LengthFiltersDropTrainingPairsOnly) {
  auto o = base_options("filtered");
  o.filter.max_len = 12;
  o.filter.max_len_ratio = 1.6;
  auto summary = preprocess(o);
  EXPECT_GT(summary.filtered.too_long, 0);
  EXPECT_GT(summary.filtered.ratio, 0);
  EXPECT_EQ(summary.filtered.too_short, 0);
  MMapIndexedDataset src(dataset_prefix(o.destdir, "train", "src", "tgt", "src"));
  MMapIndexedDataset tgt(dataset_prefix(o.destdir, "train", "src", "tgt", "tgt"));
  EXPECT_EQ(static_cast<int64_t>(src.size()), 2000 - summary.filtered.total());
  ASSERT_EQ(src.size(), tgt.size());
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t a = src.length(i) - 1, b = tgt.length(i) - 1;  // without </s>
    ASSERT_LE(std::max(a, b), 12);
    ASSERT_LE(static_cast<double>(std::max(a, b)), 1.6 * static_cast<double>(std::min(a, b)));
  }
  MMapIndexedDataset valid(dataset_prefix(o.destdir, "valid", "src", "tgt", "src"));
  EXPECT_EQ(valid.size(), 100u);  // never filtered

  auto everything = base_options("everything_filtered");
  everything.filter.min_len = 1000;
  try {
    preprocess(everything);
    FAIL();
  } catch (const csan::Error& e) {
    // Names the training files, then what the filters did.
    EXPECT_NE(std::string(e.what()).find("/train.src, "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(": no training pair is left after filtering (2000 lines read; removed 2000 "
                                         "shorter than --min-len 1000"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(everything.destdir));
}

TEST(Preprocess, OnlySourceWritesOneLanguage) {
  auto o = base_options("mono");
  o.only_source = true;
  o.target_lang.clear();
  o.testpref.clear();
  o.spm.vocab_size = 120;  // one language has fewer pieces to offer
  preprocess(o);
  auto files = directory_contents(o.destdir);
  std::vector<std::string> names;
  for (const auto& [name, _] : files) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"dict.src.txt", "preprocess.json", "spm.model", "train.src.bin",
                                             "train.src.idx", "valid.src.bin", "valid.src.idx"}));
}

TEST(Preprocess, JoinedDictionaryAndReusedModelGiveTheSameData) {
  auto joined = base_options("joined");
  joined.joined_dictionary = true;
  preprocess(joined);
  EXPECT_EQ(csan::read_file(joined.destdir + "/dict.src.txt"), csan::read_file(joined.destdir + "/dict.tgt.txt"));

  // Reusing the model and dictionary must reproduce the binarized data exactly.
  auto reused = base_options("reused");
  reused.spm_model = joined.destdir + "/spm.model";
  reused.srcdict = joined.destdir + "/dict.src.txt";
  reused.joined_dictionary = true;
  preprocess(reused);
  auto a = directory_contents(joined.destdir), b = directory_contents(reused.destdir);
  for (const auto& [name, contents] : a) {
    if (name == "preprocess.json") continue;
    EXPECT_TRUE(b.at(name) == contents) << name;
  }
}

TEST(Preprocess, PerLanguageModelsAndSeveralValidSets) {
  auto o = base_options("per_language");
  o.spm_per_language = true;
  o.spm.vocab_size = 120;
  o.validpref = {o.validpref[0], o.testpref[0]};
  preprocess(o);
  EXPECT_TRUE(fs::exists(o.destdir + "/spm.src.model"));
  EXPECT_TRUE(fs::exists(o.destdir + "/spm.tgt.model"));
  EXPECT_FALSE(fs::exists(o.destdir + "/spm.model"));
  MMapIndexedDataset valid1(dataset_prefix(o.destdir, "valid1", "src", "tgt", "tgt"));
  auto spm = csan::text::SentencePieceModel::load(o.destdir + "/spm.tgt.model");
  auto dict = csan::text::Dictionary::load(o.destdir + "/dict.tgt.txt");
  EXPECT_EQ(decode(valid1, 5, dict, spm), toy().splits[2].target[5]);
}

TEST(Preprocess, BadInputsNameTheProblem) {
  auto message_of = [](const PreprocessOptions& o) {
    try {
      preprocess(o);
    } catch (const csan::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto missing = base_options("missing");
  missing.validpref = {(work_dir() / "nope").string()};
  EXPECT_NE(message_of(missing).find((work_dir() / "nope.src").string() + ": cannot open"), std::string::npos)
      << message_of(missing);
  EXPECT_FALSE(fs::exists(missing.destdir));

  auto no_target = base_options("no_target");
  no_target.target_lang.clear();
  EXPECT_EQ(message_of(no_target), "key 'target-lang': is required unless --only-source is given");
}

std::string message_of(const PreprocessOptions& o) {
  try {
    preprocess(o);
  } catch (const csan::Error& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

// Counts that fairseq would silently read as "all" (or as nothing) are refused, each
// naming its own option.
TEST(Preprocess, NegativeCountsNameTheirOption) {
  auto o = base_options("negative");
  auto with = [&](auto change) {
    PreprocessOptions changed = o;
    change(changed);
    return message_of(changed);
  };
  EXPECT_EQ(with([](auto& c) { c.nwordssrc = -7; }),
            "key 'nwordssrc': must be -1 (keep all) or a positive count, got -7");
  EXPECT_EQ(with([](auto& c) { c.nwordstgt = 0; }),
            "key 'nwordstgt': must be -1 (keep all) or a positive count, got 0");
  EXPECT_EQ(with([](auto& c) { c.thresholdsrc = -2; }), "key 'thresholdsrc': must not be negative");
  EXPECT_EQ(with([](auto& c) { c.thresholdtgt = -1; }), "key 'thresholdtgt': must not be negative");
  EXPECT_EQ(with([](auto& c) { c.filter.min_len = -1; }), "key 'min-len': must not be negative");
  EXPECT_EQ(with([](auto& c) { c.filter.max_len = -3; }), "key 'max-len': must not be negative (0: no limit)");
  EXPECT_EQ(with([](auto& c) { c.filter.max_len_ratio = -2; }),
            "key 'max-len-ratio': must not be negative (0: no limit)");
  EXPECT_EQ(with([](auto& c) { c.spm.input_sentence_size = -4; }),
            "key 'spm-input-sentence-size': must not be negative (0: all sentences)");
  EXPECT_FALSE(fs::exists(o.destdir));
  // -1 (the documented "all") still works.
  PreprocessOptions all = o;
  all.nwordssrc = -1;
  all.validpref.clear();
  all.testpref.clear();
  EXPECT_NO_THROW(preprocess(all));
}

TEST(Preprocess, EmptyCorpusNamesItsFiles) {
  const fs::path raw = work_dir() / "empty_raw";
  fs::create_directories(raw);
  csan::write_file_atomically((raw / "none.src").string(), "");
  csan::write_file_atomically((raw / "none.tgt").string(), "");
  csan::write_file_atomically((raw / "blank.src").string(), " \n\n\t\n");
  csan::write_file_atomically((raw / "blank.tgt").string(), "a\nb\nc\n");
  const std::string none = (raw / "none").string(), blank = (raw / "blank").string();

  auto empty_train = base_options("empty_train");
  empty_train.trainpref = {none};
  EXPECT_EQ(message_of(empty_train), none + ".src, " + none + ".tgt: the train split has no lines");
  auto blank_train = base_options("blank_train");
  blank_train.trainpref = {blank};
  EXPECT_EQ(message_of(blank_train), blank + ".src: the train split has only empty lines");
  auto empty_valid = base_options("empty_valid");
  empty_valid.validpref = {none};
  EXPECT_EQ(message_of(empty_valid), none + ".src, " + none + ".tgt: the valid split has no lines");
  for (const auto* o : {&empty_train, &blank_train, &empty_valid}) EXPECT_FALSE(fs::exists(o->destdir));
}

// A run killed with SIGKILL (or a crashed machine) leaves DEST.tmp.PID.N behind; the next
// run into DEST removes it, but never the temporaries of a run still going.
TEST(Preprocess, RemovesLeftoversOfDeadRunsOnly) {
  auto o = base_options("leftovers");
  o.validpref.clear();
  o.testpref.clear();
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string of_dead = o.destdir + ".tmp." + std::to_string(dead) + ".0";
  const std::string of_live = o.destdir + ".tmp." + std::to_string(::getpid()) + ".77";
  fs::create_directories(of_dead + "/sub");
  csan::write_file_atomically(of_dead + "/sub/train.src-tgt.src.bin", "partial");
  fs::create_directories(of_live);
  auto summary = preprocess(o);
  EXPECT_FALSE(fs::exists(of_dead));
  EXPECT_TRUE(fs::exists(of_live));
  ASSERT_EQ(summary.removed_temporaries, std::vector<std::string>{of_dead});
  EXPECT_NE(summary.format().find("removed the leftover of an interrupted run: " + of_dead), std::string::npos);
  fs::remove_all(of_live);
}

}  // namespace
