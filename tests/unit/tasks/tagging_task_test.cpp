// The tagging task on a small generated treebank: batches of "words", "chars" and
// "labels" padded to the chunk length with the padding word, a criterion that ignores
// padding, validation accuracy over real words, checkpoint data that rebuilds the model
// context, a short run_training with early stopping on accuracy, and csan-generate's
// tagging of a CoNLL-U file (only the tag column changes).
#include "toolkit/tasks/tagging_task.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/model_fixtures.h"
#include "tests/support/toy_treebank.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/data/conllu.h"
#include "toolkit/data/tagging_preprocess.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/tasks/generate.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/tagging_batch.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/training/train_loop.h"

namespace fs = std::filesystem;

namespace {

using csan::testing::error_of;

using namespace csan;

const fs::path& work_dir() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("csan-tagging-task-" + std::to_string(::getpid()));
    remove_tree(d.string());
    fs::create_directories(d);
    csan::testing::ToyTreebank bank(3);
    std::ofstream(d / "train.conllu") << bank.conllu(160, 40);
    std::ofstream(d / "dev.conllu") << bank.conllu(30, 15);
    std::ofstream(d / "test.conllu") << bank.conllu(30);
    data::TaggingPreprocessOptions o;
    o.trainpref = (d / "train").string(), o.validpref = (d / "dev").string(), o.testpref = (d / "test").string();
    o.destdir = (d / "data").string();
    o.protocol = data::VocabProtocol::kConvatt;
    o.word_chars = 12;
    data::preprocess_tagging(o);
    return d;
  }();
  return dir;
}

std::string recipe_text(const std::string& save_dir = "") {
  return "task: {name: tagging, data: " + (work_dir() / "data").string() +
         "}\nmodel:\n  arch: tagger_conv2d\n  tagger: {word_dim: 16, char_dim: 8, char_filters: 8, layers: 2, heads: "
         "2}\ncriterion: {name: cross_entropy}\noptimizer: {name: rmsprop}\nlr_scheduler: {name: fixed}\n"
         "optimization: {lr: 0.005, max_epoch: 30, patience: 2}\ndataset: {max_tokens: 0, max_sentences: 16}\n"
         "checkpoint: {best_checkpoint_metric: accuracy, no_epoch_checkpoints: true, save_dir: " +
         (save_dir.empty() ? (work_dir() / "unused").string() : save_dir) +
         "}\ncommon: {log_interval: 1000, seed: 3}\n";
}

TEST(TaggingTask, BatchesArePaddedChunksOfWordsCharactersAndLabels) {
  const auto cfg = csan::testing::recipe(recipe_text());
  auto task = tasks::open_task(cfg);
  EXPECT_EQ(task->name(), "tagging");
  EXPECT_NE(task->describe().find("convatt vocabularies"), std::string::npos) << task->describe();
  const auto& train = task->train_data();
  EXPECT_GT(train.size(), 160u);  // long sentences make several chunks
  EXPECT_EQ(train.source_sizes(), std::vector<int32_t>(train.size(), 60));
  const auto batch = train.collate({0, 39, 5});
  const auto& words = batch.fields.at("words");
  const auto& chars = batch.fields.at("chars");
  const auto& labels = batch.fields.at("labels");
  EXPECT_EQ(words.sizes(), (std::vector<int64_t>{3, 60}));
  EXPECT_EQ(chars.sizes(), (std::vector<int64_t>{3, 60, 12}));
  EXPECT_EQ(labels.sizes(), (std::vector<int64_t>{3, 60}));
  const auto real = words.ne(0);
  EXPECT_EQ(batch.ntokens, real.sum().item<int64_t>());
  EXPECT_TRUE(labels.ne(0).eq(real).all().item<bool>());  // label <PAD> exactly at padding
  EXPECT_EQ(real[1].sum().item<int64_t>(), 60);           // sentence 40 is long: a full chunk
  // Padding words are spelt "<PAD>" (the convatt protocol).
  const auto chars_vocab = data::TaggingVocabulary::load((work_dir() / "data" / "dict.chars.txt").string());
  const auto pad_chars = data::pad_word_char_ids({60, 12, "<PAD>"}, chars_vocab);
  const int64_t last = real[0].sum().item<int64_t>();
  for (int64_t c = 0; c < 12; ++c) EXPECT_EQ(chars[0][last][c].item<int64_t>(), pad_chars[c]) << c;
  EXPECT_EQ(chars_vocab.symbol(static_cast<int>(chars[0][last][1].item<int64_t>())), "P");
}

TEST(TaggingTask, CriterionIgnoresPaddingAndValidationCountsRealWords) {
  const auto cfg = csan::testing::recipe(recipe_text());
  auto task = tasks::open_task(cfg);
  torch::manual_seed(1);
  auto model = models::build_model(cfg, task->model_context());
  model->eval();
  auto& tagger = dynamic_cast<models::TaggingModel&>(*model);
  const auto batch = task->train_data().collate({1, 2, 3, 4});
  const auto out = task->criterion(cfg)->compute(*model, batch);
  const auto logits = tagger.tag(batch.fields);
  const auto labels = batch.fields.at("labels");
  const auto real = labels.ne(0);
  const auto manual =
      -torch::log_softmax(logits, -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1).masked_select(real).sum();
  EXPECT_NEAR(out.loss.item<double>(), manual.item<double>(), 1e-3);
  EXPECT_EQ(out.sample_size, real.sum().item<int64_t>());

  auto validator = task->validator([](const std::string&) {});
  ASSERT_TRUE(validator);
  ASSERT_EQ(task->metrics().size(), 1u);
  EXPECT_EQ(task->metrics()[0].name, "accuracy");
  EXPECT_TRUE(task->metrics()[0].higher_is_better);
  const auto& valid = *task->valid_data();
  std::vector<data::Batch> batches = {{0, 1, 2}, {3, 4}};
  const auto sums = validator->statistics(*model, batches);
  double correct = 0, total = 0;
  for (const auto& b : batches) {
    const auto t = valid.collate(b);
    const auto gold = t.fields.at("labels");
    const auto predicted = tasks::predict_labels(tagger.tag(t.fields));
    EXPECT_TRUE(predicted.ge(2).all().item<bool>());  // never <PAD> or <OOV>
    correct += predicted.eq(gold).logical_and(gold.ne(0)).sum().item<double>();
    total += gold.ne(0).sum().item<double>();
  }
  EXPECT_EQ(sums, (std::vector<double>{correct, total}));
  EXPECT_DOUBLE_EQ(validator->values(sums)[0].second, 100.0 * correct / total);
  // Logits that favour <PAD> and <OOV> still predict a tag.
  auto favour = torch::zeros({1, 1, 5});
  favour[0][0][0] = 9, favour[0][0][1] = 8, favour[0][0][3] = 1;
  EXPECT_EQ(tasks::predict_labels(favour).item<int64_t>(), 3);
}

TEST(TaggingTask, CheckpointDataRebuildsTheContextAndGuardsResumption) {
  const auto cfg = csan::testing::recipe(recipe_text());
  auto task = tasks::open_task(cfg);
  const auto meta = task->checkpoint_meta();
  const auto context = tasks::task_registry().get("tagging").model_context(meta, "x.pt");
  EXPECT_EQ(context.vocab_sizes, task->model_context().vocab_sizes);
  EXPECT_EQ(context.vocab_size("positions"), 60);
  EXPECT_EQ(context.pad_index, 0);
  auto other = meta;
  other.data["labels_vocabulary"] = "<PAD> 0\n<OOV> 0\nX 1\n";
  EXPECT_NE(error_of([&] { task->check_resume(other, "x.pt"); }).find("labels_vocabulary differs from the one in x.pt"),
            std::string::npos);
  other = meta;
  other.data.erase("chunk_length");
  EXPECT_NE(error_of([&] { tasks::tagging_data_from_meta(other, "x.pt"); }).find("x.pt: no chunk_length"),
            std::string::npos);
  // criterion: cross-entropy (label-smoothed or not) only.
  auto bad = csan::testing::recipe(recipe_text());
  bad.set("criterion.name", std::string("label_smoothed_cross_entropy"));
  EXPECT_NO_THROW(task->criterion(bad));
}

TEST(TaggingTask, TrainsWithEarlyStoppingThenTagsConllu) {
  const std::string save_dir = (work_dir() / "run").string();
  const auto cfg = csan::testing::recipe(recipe_text(save_dir));
  auto task = tasks::open_task(cfg);
  ASSERT_EQ(training::run_training(cfg, *task), 0);
  std::ifstream metrics(save_dir + "/metrics.jsonl");
  std::vector<double> accuracy;
  for (std::string line; std::getline(metrics, line);) {
    const auto at = line.find("\"accuracy\": ");
    if (at != std::string::npos) accuracy.push_back(std::stod(line.substr(at + 12)));
  }
  ASSERT_GE(accuracy.size(), 3u);
  EXPECT_LT(accuracy.size(), 30u) << "patience 2 on accuracy ends the run before max_epoch";
  EXPECT_GT(*std::max_element(accuracy.begin(), accuracy.end()), 85.0) << "the toy grammar is learnable";

  tasks::GenerateOptions options;
  options.paths = {save_dir + "/checkpoint_best.pt"};
  options.input = (work_dir() / "test.conllu").string();
  std::ostringstream out, log;
  tasks::run_generate(options, out, log);
  const auto input = data::read_conllu(options.input);
  const auto tagged = data::parse_conllu(out.str(), "output");
  ASSERT_EQ(tagged.sentences.size(), input.sentences.size());
  size_t correct = 0, words = 0;
  for (size_t s = 0; s < input.sentences.size(); ++s) {
    ASSERT_EQ(tagged.sentences[s].lines.size(), input.sentences[s].lines.size());
    for (size_t w = 0; w < input.sentences[s].words.size(); ++w) {
      const auto &a = input.sentences[s].words[w], &b = tagged.sentences[s].words[w];
      EXPECT_EQ(a.form, b.form);
      EXPECT_EQ(a.xpos, b.xpos);  // only UPOS is predicted
      correct += a.upos == b.upos, ++words;
    }
  }
  EXPECT_GT(double(correct) / double(words), 0.85);
  EXPECT_NE(log.str().find("accuracy against the input's tags"), std::string::npos) << log.str();

  options.input.clear();
  options.data_dir = (work_dir() / "data").string();
  EXPECT_NE(error_of([&] { tasks::run_generate(options, out, log); }).find("give --input FILE.conllu"),
            std::string::npos);
  options.data_dir.clear();
  options.input = (work_dir() / "missing.conllu").string();
  EXPECT_NE(error_of([&] { tasks::run_generate(options, out, log); }).find("missing.conllu"), std::string::npos);
}

}  // namespace
