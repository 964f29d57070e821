// csan-train --reuse-dictionaries as the library call it is (tasks::with_reused_dictionaries),
// on toy data binarized in this process and a checkpoint holding only its vocabulary: the
// data is written with the checkpoint's vocabulary, a complete folder is reused, data that
// has the checkpoint's vocabulary is trained on as it is, and every refusal is one line
// naming the key or file, with nothing written. (Fine-tuning on the re-binarized data, and
// its files byte for byte csan-preprocess --from-checkpoint's: TrainResume in tests/cli.)
#include "toolkit/tasks/reused_dictionaries.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/model_fixtures.h"
#include "tests/support/text_files.h"
#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/data/preprocess.h"
#include "toolkit/text/toy_corpus.h"

namespace fs = std::filesystem;

namespace csan::tasks {
namespace {

using csan::testing::error_of;
using csan::testing::slurp;

class ReusedDictionaries : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = (fs::temp_directory_path() / ("csan-reused-dictionaries-" + std::to_string(::getpid()))).string();
    remove_tree(root_);
    text::ToyCorpusOptions toy;
    toy.train = 120;
    toy.valid = 10;
    toy.test = 0;
    toy.max_words = 6;
    text::write_toy_corpus(text::generate_toy_corpus(toy), root_ + "/raw", "src", "tgt");
    // The base model's data and the new data: the same text, other vocabularies.
    binarize(root_ + "/base", 120);
    binarize(root_ + "/new", 100);
    // A checkpoint with the base data's vocabulary (all that --reuse-dictionaries reads).
    checkpoint::CheckpointMeta meta;
    meta.recipe_yaml = "model:\n  arch: toy\n";
    meta.data = {{"src_lang", "src"},
                 {"tgt_lang", "tgt"},
                 {"src_dict", read_file(root_ + "/base/dict.src.txt")},
                 {"tgt_dict", read_file(root_ + "/base/dict.tgt.txt")},
                 {"spm_model", read_file(root_ + "/base/spm.model")}};
    checkpoint::CheckpointWriter writer;
    writer.set_meta(meta);
    writer.write(root_ + "/base.pt");
  }
  static void TearDownTestSuite() { remove_tree(root_); }

  static void binarize(const std::string& destdir, int vocab) {
    data::PreprocessOptions o;
    o.source_lang = "src";
    o.target_lang = "tgt";
    o.trainpref = {root_ + "/raw/train"};
    o.validpref = {root_ + "/raw/valid"};
    o.destdir = destdir;
    o.joined_dictionary = true;
    o.spm.vocab_size = vocab;
    o.progress = false;
    data::preprocess(o);
  }

  // The recipe of a run on `data` into `save_dir` with --reuse-dictionaries, fine-tuning
  // base.pt unless `finetune` is false.
  static core::Config recipe(const std::string& data, const std::string& save_dir, bool finetune = true) {
    return csan::testing::recipe("task:\n  data: " + data + "\nmodel:\n  arch: transformer_tiny\ncheckpoint:\n" +
                                 "  save_dir: " + save_dir + "\n  reuse_dictionaries: true\n" +
                                 (finetune ? "  finetune_from_model: " + root_ + "/base.pt\n" : std::string()));
  }

  static std::string root_;
};
std::string ReusedDictionaries::root_;

TEST_F(ReusedDictionaries, WritesTheDataWithTheCheckpointsVocabularyOnceAndReusesIt) {
  const std::string save_dir = root_ + "/save";
  const core::Config cfg = with_reused_dictionaries(recipe(root_ + "/new", save_dir));
  const std::string rebinarized = save_dir + "/data-rebinarized";
  EXPECT_EQ(cfg.get<std::string>("task.data"), rebinarized);
  for (const std::string file : {"/dict.src.txt", "/dict.tgt.txt", "/spm.model"})
    EXPECT_EQ(slurp(rebinarized + file), slurp(root_ + "/base" + file)) << file;
  EXPECT_NE(slurp(root_ + "/new/dict.src.txt"), slurp(root_ + "/base/dict.src.txt"));
  EXPECT_NE(slurp(rebinarized + "/train.src-tgt.src.bin"), slurp(root_ + "/new/train.src-tgt.src.bin"));
  // Again (a resume): the complete folder is reused as it is.
  const auto written_at = fs::last_write_time(rebinarized + "/train.src-tgt.src.bin");
  EXPECT_EQ(with_reused_dictionaries(recipe(root_ + "/new", save_dir)).get<std::string>("task.data"), rebinarized);
  EXPECT_EQ(fs::last_write_time(rebinarized + "/train.src-tgt.src.bin"), written_at);
  // Data binarized with the checkpoint's vocabulary is trained on as it is.
  EXPECT_EQ(with_reused_dictionaries(recipe(root_ + "/base", root_ + "/save-base")).get<std::string>("task.data"),
            root_ + "/base");
  EXPECT_FALSE(fs::exists(root_ + "/save-base"));
  // Without the option: the recipe as it is.
  auto plain = recipe(root_ + "/new", root_ + "/save-plain");
  plain.set("checkpoint.reuse_dictionaries", false);
  EXPECT_EQ(with_reused_dictionaries(plain).get<std::string>("task.data"), root_ + "/new");
}

TEST_F(ReusedDictionaries, RefusalsAreOneLineAndWriteNothing) {
  const std::string save_dir = root_ + "/refused";
  auto refusal = [&](const core::Config& cfg) { return error_of([&] { with_reused_dictionaries(cfg); }); };
  EXPECT_EQ(refusal(recipe(root_ + "/new", save_dir, /*finetune=*/false)),
            "key 'checkpoint.reuse_dictionaries': needs a checkpoint to take the dictionaries from: "
            "--finetune-from-model CKPT or --restore-file CKPT (" +
                save_dir + "/checkpoint_last.pt does not exist)");
  auto tagging = recipe(root_ + "/new", save_dir);
  tagging.set("task.name", std::string("tagging"));
  EXPECT_EQ(refusal(tagging),
            "key 'checkpoint.reuse_dictionaries': task tagging cannot re-binarize its data with a checkpoint's "
            "dictionaries (translation can)");
  // Data directories whose record is missing, holds no training prefix, or names a raw file
  // that is gone.
  const std::string edited = root_ + "/edited";
  fs::create_directories(edited);
  for (const auto& entry : fs::directory_iterator(root_ + "/new"))
    fs::copy_file(entry.path(), edited + "/" + entry.path().filename().string(), fs::copy_options::overwrite_existing);
  const std::string record = read_file(root_ + "/new/preprocess.json");
  auto record_with = [&](const std::string& from, const std::string& to) {
    std::string text = record;
    ASSERT_NE(text.find(from), std::string::npos) << text;
    write_file_atomically(edited + "/preprocess.json", text.replace(text.find(from), from.size(), to));
  };
  record_with("[\"" + root_ + "/raw/train\"]", "[]");
  EXPECT_EQ(refusal(recipe(edited, save_dir)),
            edited +
                "/preprocess.json: records no raw training text (trainpref) to re-binarize with "
                "--reuse-dictionaries");
  record_with("\"" + root_ + "/raw/valid\"", "\"" + root_ + "/raw/gone\"");
  EXPECT_EQ(refusal(recipe(edited, save_dir)),
            root_ + "/raw/gone.src: no such file (raw text of the validpref recorded in " + edited +
                "/preprocess.json, which --reuse-dictionaries re-binarizes)");
  record_with("\"source_lang\": \"src\"", "\"source_lang\": \"xx\"");
  EXPECT_EQ(refusal(recipe(edited, save_dir)),
            edited + "/preprocess.json: the data translates xx -> tgt but " + root_ + "/base.pt src -> tgt");
  fs::remove(edited + "/preprocess.json");
  EXPECT_EQ(refusal(recipe(edited, save_dir)),
            edited +
                "/preprocess.json: missing (not a directory written by csan-preprocess); --reuse-dictionaries "
                "re-binarizes the raw text it records");
  EXPECT_FALSE(fs::exists(save_dir));
  // A save dir whose data-rebinarized holds other data (other raw text) is left as it is.
  const std::string other_save = root_ + "/other";
  with_reused_dictionaries(recipe(root_ + "/new", other_save));
  record_with("[\"" + root_ + "/raw/valid\"]", "[]");
  const std::string held = slurp(other_save + "/data-rebinarized/preprocess.json");
  EXPECT_EQ(refusal(recipe(edited, other_save))
                .find(other_save + "/data-rebinarized: holds other data than " + edited + "'s raw text binarized with"),
            0u);
  EXPECT_EQ(slurp(other_save + "/data-rebinarized/preprocess.json"), held);
  for (const auto& message : {refusal(recipe(edited, other_save)), refusal(tagging)})
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace csan::tasks
