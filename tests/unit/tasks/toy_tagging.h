// A toy tagging task and a toy tagging arch, registered by the tests only: the shape the
// convoluted-attention tagger will have (a batch of words + characters + labels, a
// TaggingModel, a criterion over labels, accuracy as the validation metric with early
// stopping on it), built on the task layer without touching the trainer. Data is made
// in memory: the label of a word is its id modulo task.toy_labels.
#pragma once

#include <boost/program_options.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/nn/multihead_attention.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/training/task.h"

namespace csan::tasks::testing {

constexpr int64_t kWords = 20, kChars = 10, kCharsPerWord = 3, kPad = 1;

struct ToySentences {
  std::vector<std::vector<int64_t>> words;
  std::vector<int32_t> sizes;
};

inline ToySentences toy_sentences(int64_t count, uint64_t seed) {
  ToySentences s;
  uint64_t x = seed * 2654435761u + 1;
  auto next = [&] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> sentence(3 + next() % 6);
    for (auto& w : sentence) w = 4 + static_cast<int64_t>(next() % (kWords - 4));
    s.sizes.push_back(static_cast<int32_t>(sentence.size()));
    s.words.push_back(std::move(sentence));
  }
  return s;
}

// The characters of a word: a fixed function of its id.
inline torch::Tensor toy_chars(const torch::Tensor& words) {
  auto k = torch::arange(kCharsPerWord, torch::kLong);
  return 2 + (words.unsqueeze(-1) + k) % (kChars - 2);
}

class ToyTaggingDataset : public training::TaskDataset {
 public:
  ToyTaggingDataset(ToySentences sentences, int64_t labels) : s_(std::move(sentences)), labels_(labels) {}
  size_t size() const override { return s_.words.size(); }
  const std::vector<int32_t>& source_sizes() const override { return s_.sizes; }
  const std::vector<int32_t>& target_sizes() const override { return s_.sizes; }
  training::TensorBatch collate(const data::Batch& batch) const override {
    int64_t longest = 0;
    for (int64_t i : batch) longest = std::max<int64_t>(longest, s_.sizes[i]);
    const auto b = static_cast<int64_t>(batch.size());
    auto words = torch::full({b, longest}, kPad, torch::kLong);
    auto labels = torch::full({b, longest}, -1, torch::kLong);  // -1: padding, ignored
    training::TensorBatch t;
    for (int64_t r = 0; r < b; ++r) {
      const auto& sentence = s_.words[batch[r]];
      for (size_t c = 0; c < sentence.size(); ++c) {
        words[r][c] = sentence[c];
        labels[r][c] = sentence[c] % labels_;
      }
      t.ntokens += static_cast<int64_t>(sentence.size());
    }
    t.nsentences = b;
    t.fields = {{"words", words}, {"chars", toy_chars(words)}, {"labels", labels}};
    return t;
  }

 private:
  ToySentences s_;
  int64_t labels_;
};

// Cross-entropy over the labelled positions (label -1 is padding).
class ToyTaggingCriterion : public training::Criterion {
 public:
  training::CriterionOutput compute(models::Model& model, const training::TensorBatch& batch) override {
    auto& tagger = models::as_family<models::TaggingModel>(model, "the toy tagging criterion", models::kTagging);
    auto logits = tagger.tag(batch.fields);
    auto labels = batch.fields.at("labels");
    auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-1).reduction(torch::kSum));
    training::CriterionOutput out;
    out.loss = loss;
    out.loss_sum = out.nll_sum = loss.item<double>();
    out.ntokens = out.sample_size = batch.ntokens;
    out.nsentences = batch.nsentences;
    return out;
  }
};

class ToyAccuracy : public training::Validator {
 public:
  explicit ToyAccuracy(const ToyTaggingDataset& valid) : valid_(valid) {}
  std::vector<double> statistics(models::Model& model, const std::vector<data::Batch>& batches) override {
    torch::NoGradGuard no_grad;
    auto& tagger = models::as_family<models::TaggingModel>(model, "toy accuracy", models::kTagging);
    double correct = 0, total = 0;
    for (const auto& batch : batches) {
      if (batch.empty()) continue;
      auto t = valid_.collate(batch);
      auto labels = t.fields.at("labels");
      auto predicted = tagger.tag(t.fields).argmax(-1);
      auto real = labels.ne(-1);
      correct += predicted.eq(labels).logical_and(real).sum().item<double>();
      total += real.sum().item<double>();
    }
    return {correct, total};
  }
  std::vector<std::pair<std::string, double>> values(const std::vector<double>& sums) const override {
    return {{"accuracy", sums[1] > 0 ? 100.0 * sums[0] / sums[1] : 0.0}};
  }

 private:
  const ToyTaggingDataset& valid_;
};

inline int64_t labels_of(const core::Config& cfg) { return cfg.get<int64_t>("task.toy_labels"); }

inline models::ModelContext toy_context(int64_t labels) {
  return {{{"words", kWords}, {"chars", kChars}, {"labels", labels}}, kPad, false};
}

class ToyTaggingTask : public training::Task {
 public:
  explicit ToyTaggingTask(const core::Config& cfg)
      : labels_(labels_of(cfg)), train_(toy_sentences(60, 1), labels_), valid_(toy_sentences(20, 2), labels_) {}
  std::string name() const override { return "toy_tagging"; }
  std::string model_family() const override { return models::kTagging; }
  models::ModelContext model_context() const override { return toy_context(labels_); }
  checkpoint::CheckpointMeta checkpoint_meta() const override {
    checkpoint::CheckpointMeta meta;
    meta.task = name();
    meta.data = {{"labels", std::to_string(labels_)}};
    return meta;
  }
  void check_resume(const checkpoint::CheckpointMeta& saved, const std::string& path) const override {
    if (saved.get("labels") != std::to_string(labels_)) throw Error(path + ": other labels");
  }
  const training::TaskDataset& train_data() const override { return train_; }
  const training::TaskDataset* valid_data() const override { return &valid_; }
  std::string valid_subset() const override { return "valid"; }
  std::unique_ptr<training::Criterion> criterion(const core::Config&) const override {
    return std::make_unique<ToyTaggingCriterion>();
  }
  std::vector<training::MetricSpec> metrics() const override { return {{"accuracy", true}}; }
  std::unique_ptr<training::Validator> validator(std::function<void(const std::string&)>) const override {
    return std::make_unique<ToyAccuracy>(valid_);
  }
  std::string describe() const override { return "toy tagging data: " + std::to_string(train_.size()) + " sentences"; }

 private:
  int64_t labels_;
  ToyTaggingDataset train_, valid_;
};

// Word + mean character embedding, one self-attention (site encoder.self, so recipes can
// give it an attention chain), a classifier over [input; attended].
class ToyTagger : public models::TaggingModel {
 public:
  ToyTagger(int64_t dim, const models::ModelContext& context) {
    words_ = register_module("words", torch::nn::Embedding(context.vocab_size("words"), dim));
    chars_ = register_module("chars", torch::nn::Embedding(context.vocab_size("chars"), dim));
    attention = register_module("attention", nn::MultiheadAttention(nn::MultiheadAttentionOptions{dim, 2, 0.0, false}));
    classify_ = register_module("classify", torch::nn::Linear(2 * dim, context.vocab_size("labels")));
  }
  torch::Tensor tag(const models::NamedTensors& input) override {
    auto x = words_(input.at("words")) + chars_(input.at("chars")).mean(2);
    return classify_(torch::cat({x, attention(x, x, x)}, -1));
  }
  void for_each_attention(
      const std::function<void(const nn::AttentionSite&, nn::MultiheadAttention&)>& visit) override {
    visit({"encoder.self", 0, 1, 2, attention->options().embed_dim, false, true}, attention);
  }
  nn::MultiheadAttention attention{nullptr};

 private:
  torch::nn::Embedding words_{nullptr}, chars_{nullptr};
  torch::nn::Linear classify_{nullptr};
};

// csan-generate on a toy checkpoint: the predicted label of each word of --input (one
// sentence of word ids per line), space-separated.
inline void toy_generate(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                         std::ostream&) {
  auto loaded = loading::load_model(first, describe_model);
  auto& tagger = models::as_family<models::TaggingModel>(*loaded.model, "toy generation", models::kTagging);
  std::istringstream lines(options.input);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream ids(line);
    std::vector<int64_t> words;
    for (int64_t id; ids >> id;) words.push_back(id);
    const auto n = static_cast<int64_t>(words.size());
    auto w = torch::tensor(words).view({1, n});
    auto predicted = tagger.tag({{"words", w}, {"chars", toy_chars(w)}}).argmax(-1);
    for (int64_t i = 0; i < n; ++i) out << (i ? " " : "") << predicted[0][i].item<int64_t>();
    out << "\n";
  }
}

inline void register_toy_tagging() {
  static const bool once = [] {
    tasks::task_registry().add("toy_tagging",
                               {"toy tagging (tests)", models::kTagging,
                                [](core::ConfigSchema& s) { s.add_int("task.toy_labels", std::nullopt, "labels", 2); },
                                [] {
                                  return std::map<std::string, core::Value>{{"task.toy_labels", int64_t{3}}};
                                },
                                [](const core::Config& cfg) -> std::unique_ptr<training::Task> {
                                  return std::make_unique<ToyTaggingTask>(cfg);
                                },
                                [](const checkpoint::CheckpointMeta& meta, const std::string&) {
                                  return toy_context(std::stoll(meta.get("labels")));
                                },
                                [](GenerateOptions& o) {
                                  namespace po = boost::program_options;
                                  auto section = std::make_unique<po::options_description>("Toy tagging checkpoints");
                                  section->add_options()("input", po::value(&o.input), "sentences of word ids");
                                  return section;
                                },
                                toy_generate, /*rebinarize_data=*/nullptr});
    models::arch_registry().add(
        "toy_tagger",
        {models::kTagging,
         [](core::ConfigSchema& s) { s.add_int("model.toy_dim", std::nullopt, "width", 2); },
         [] {
           return std::map<std::string, core::Value>{{"model.toy_dim", int64_t{8}}};
         },
         [](const core::Config& cfg, const models::ModelContext& context) -> std::shared_ptr<models::Model> {
           return std::make_shared<ToyTagger>(cfg.get<int64_t>("model.toy_dim"), context);
         },
         {},
         {"encoder.self"}});
    return true;
  }();
  (void)once;
}

}  // namespace csan::tasks::testing
