// Resuming csan-train with a recipe that differs from the checkpoint's: keys that define
// the model, and other data (dictionaries), are one-line errors naming the key or file,
// both values and the checkpoint; schedule keys such as max_update may change, and the
// run logs what changed. Fine-tuning (--finetune-from-model) on other data needs that
// data binarized with the checkpoint's vocabulary (csan-preprocess --from-checkpoint, or
// csan-train --reuse-dictionaries).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }
size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

std::string make_data(const std::string& dir, const std::string& seed, const std::string& vocab) {
  auto r = run({tool("csan-toy-corpus"), "--out-dir", dir + "/raw", "--train", "200", "--valid", "10", "--test", "5",
                "--seed", seed, "--max-words", "6"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  r = run({bin("csan-preprocess"), "--source-lang", "src", "--target-lang", "tgt", "--trainpref", dir + "/raw/train",
           "--validpref", dir + "/raw/valid", "--destdir", dir + "/bin", "--joined-dictionary", "--spm-vocab-size",
           vocab, "--workers", "1"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  return dir + "/bin";
}

RunResult train(const std::string& data, const std::string& save, std::vector<std::string> extra) {
  std::vector<std::string> args = {bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                   "--data",          data,
                                   "--save-dir",      save,
                                   "--max-tokens",    "512"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

TEST(TrainResume, RecipeAndDataChangesAreCheckedAgainstTheCheckpoint) {
  const std::string dir = make_temp_dir("train_resume");
  const std::string data = make_data(dir + "/a", "5", "120");
  const std::string save = dir + "/ckpt";
  auto r = train(data, save, {"--max-update", "3"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const std::string checkpoint = save + "/checkpoint_last.pt";
  ASSERT_TRUE(fs::exists(checkpoint));

  // A model key: refused before anything is logged or written.
  r = train(data, save, {"--max-update", "6", "--set", "model.decoder_layers=1"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  for (const std::string& part : {std::string("model.decoder_layers"), std::string("is 1 but 2 in"), checkpoint})
    EXPECT_NE(r.err.find(part), std::string::npos) << part << " in " << r.err;

  // Another dictionary (other data): refused, naming the dictionary file and the checkpoint.
  const std::string other = make_data(dir + "/b", "6", "100");
  r = train(other, save, {"--max-update", "6"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(other + "/dict.src.txt: differs from the one in " + checkpoint), std::string::npos) << r.err;

  // A schedule key: allowed, logged, and the run continues from update 3.
  r = train(data, save, {"--max-update", "6"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("resumed from " + checkpoint + " at epoch "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", update 3\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("recipe changes since " + checkpoint + ": optimization.max_update 3 -> 6"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("reached max_update 6"), std::string::npos) << r.err;

  // The same recipe again: no change to report.
  r = train(data, save, {"--max-update", "6"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err.find("recipe changes"), std::string::npos) << r.err;

  // Fine-tuning on other data: refused while the data's dictionaries are not the
  // checkpoint's, naming both files ...
  const std::string finetuned = dir + "/finetuned";
  r = train(other, finetuned, {"--max-update", "1", "--finetune-from-model", checkpoint});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(other + "/dict.src.txt: differs from the one in " + checkpoint), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("csan-preprocess --from-checkpoint"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("add --reuse-dictionaries"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(finetuned));
  // ... and runs once csan-preprocess binarized it with the checkpoint's model and
  // dictionaries (the languages come from the checkpoint too) ...
  const std::string reused = dir + "/b-reused";
  r = run({bin("csan-preprocess"), "--trainpref", dir + "/b/raw/train", "--validpref", dir + "/b/raw/valid",
           "--destdir", reused, "--from-checkpoint", checkpoint, "--workers", "1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const char* file : {"/dict.src.txt", "/dict.tgt.txt", "/spm.model"})
    EXPECT_EQ(slurp(reused + file), slurp(data + file)) << file;
  EXPECT_NE(slurp(reused + "/train.src-tgt.src.bin"), slurp(data + "/train.src-tgt.src.bin"));
  // ... or csan-train --reuse-dictionaries did the same, into SAVE_DIR/data-rebinarized: the
  // same files, byte for byte, as csan-preprocess --from-checkpoint wrote.
  const std::string rebinarized = finetuned + "/data-rebinarized";
  r = train(other, finetuned, {"--max-update", "2", "--finetune-from-model", checkpoint, "--reuse-dictionaries"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("wrote " + rebinarized + ": " + other + "'s raw text binarized with"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("data " + rebinarized + " (src -> tgt)"), std::string::npos) << r.err;
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(reused)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(slurp(rebinarized + "/" + name), slurp(entry.path().string())) << name;
    ++files;
  }
  EXPECT_EQ(files, 12u);  // preprocess.json, spm.model, 2 dictionaries, 2 splits x 2 sides x .bin/.idx
  EXPECT_EQ(static_cast<size_t>(std::distance(fs::directory_iterator(rebinarized), fs::directory_iterator())), files);
  EXPECT_NE(r.err.find("fine-tuning from " + checkpoint + " (update 6): its weights only"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("reached max_update 2"), std::string::npos) << r.err;  // counted from 0, not 6
  // The same command again resumes the fine-tuning run (fairseq's rule), here up to 3, on
  // the re-binarized data as it is. (Its one-line errors, and data that has the
  // checkpoint's vocabulary already: ReusedDictionaries in tests/unit/tasks.)
  const auto rebinarized_at = fs::last_write_time(rebinarized + "/train.src-tgt.src.bin");
  r = train(other, finetuned, {"--max-update", "3", "--finetune-from-model", checkpoint, "--reuse-dictionaries"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("reusing " + rebinarized + ": "), std::string::npos) << r.err;
  EXPECT_EQ(fs::last_write_time(rebinarized + "/train.src-tgt.src.bin"), rebinarized_at);
  EXPECT_NE(r.err.find(finetuned + "/checkpoint_last.pt exists: resuming it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resumed from " + finetuned + "/checkpoint_last.pt at epoch "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", update 2\n"), std::string::npos) << r.err;
  // A save dir holding another run's checkpoint (here the base run's, trained from
  // scratch) is not fine-tuned into: refused, its checkpoint untouched.
  const std::string base_bytes = slurp(checkpoint);
  r = train(data, save, {"--max-update", "7", "--finetune-from-model", finetuned + "/checkpoint_last.pt"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("checkpoint.finetune_from_model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(checkpoint + " already exists and is not a fine-tuning run"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(checkpoint), base_bytes);

  // One-line errors: no such checkpoint, a combination fairseq refuses too.
  r = train(reused, dir + "/nothing", {"--finetune-from-model", dir + "/missing.pt"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(dir + "/missing.pt: no such checkpoint"), std::string::npos) << r.err;
  r = train(reused, dir + "/nothing", {"--finetune-from-model", checkpoint, "--reset-optimizer"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/nothing"));
  r = run({bin("csan-preprocess"), "--trainpref", dir + "/b/raw/train", "--destdir", dir + "/nothing",
           "--from-checkpoint", checkpoint, "--srcdict", data + "/dict.src.txt"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_NE(r.err.find("from-checkpoint"), std::string::npos) << r.err;
  r = run({bin("csan-preprocess"), "--trainpref", dir + "/b/raw/train", "--destdir", dir + "/nothing",
           "--from-checkpoint", data + "/dict.src.txt"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_EQ(count_lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(data + "/dict.src.txt"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/nothing"));
}

}  // namespace
