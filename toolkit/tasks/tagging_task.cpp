#include "toolkit/tasks/tagging_task.h"

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/tasks/tagging_batch.h"
#include "toolkit/tasks/tagging_generate.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/training/label_smoothed_cross_entropy.h"

CSAN_REGISTRATION_ANCHOR(tagging_task)

namespace csan::tasks {

namespace {

class TaggingDataset : public training::TaskDataset {
 public:
  TaggingDataset(const std::string& dir, const std::string& split, const data::TaggingLayout& layout,
                 std::vector<int32_t> pad_word_chars)
      : split_(dir, split, layout),
        layout_(layout),
        pad_word_chars_(std::move(pad_word_chars)),
        // Every chunk is padded to t: batching sees equal sizes, so a batch is drawn from
        // the whole shuffled split (as Keras's fit(shuffle=True)), not by length.
        sizes_(split_.size(), static_cast<int32_t>(layout.chunk_length)) {}

  size_t size() const override { return split_.size(); }
  const std::vector<int32_t>& source_sizes() const override { return sizes_; }
  const std::vector<int32_t>& target_sizes() const override { return sizes_; }
  training::TensorBatch collate(const data::Batch& batch) const override {
    std::vector<TaggingChunk> chunks;
    chunks.reserve(batch.size());
    for (int64_t i : batch) {
      const auto k = static_cast<size_t>(i);
      chunks.push_back({split_.words(k), split_.chars(k), split_.labels(k)});
    }
    return collate_tagging(chunks, layout_, pad_word_chars_);
  }
  int64_t word_count() const { return split_.word_count(); }

 private:
  data::TaggingSplit split_;
  data::TaggingLayout layout_;
  std::vector<int32_t> pad_word_chars_;
  std::vector<int32_t> sizes_;
};

// Cross-entropy (label-smoothed with criterion.label_smoothing) over the real words:
// padding slots carry label <PAD>, which is ignored, as the authors' sample weights do.
// Summed; the trainer divides by the words of the update (Keras: the mean over the
// batch's real words).
class TaggingCriterion : public training::Criterion {
 public:
  explicit TaggingCriterion(double epsilon) : epsilon_(epsilon) {}
  training::CriterionOutput compute(models::Model& model, const training::TensorBatch& batch) override {
    auto& tagger = models::as_family<models::TaggingModel>(model, "the tagging task", models::kTagging);
    auto logits = tagger.tag(batch.fields);
    const auto& labels = batch.fields.at("labels");
    auto result = training::label_smoothed_cross_entropy(logits, labels, epsilon_, data::TaggingVocabulary::kPad);
    training::CriterionOutput out;
    out.loss = result.loss;
    out.loss_sum = result.loss.item<double>();
    out.nll_sum = result.nll.item<double>();
    out.ntokens = out.sample_size = batch.ntokens;
    out.nsentences = batch.nsentences;
    return out;
  }

 private:
  double epsilon_;
};

// Token accuracy on the validation split, in percent, over the real words.
class AccuracyValidator : public training::Validator {
 public:
  explicit AccuracyValidator(const TaggingDataset& valid) : valid_(valid) {}
  std::vector<double> statistics(models::Model& model, const std::vector<data::Batch>& batches) override {
    torch::NoGradGuard no_grad;
    auto& tagger = models::as_family<models::TaggingModel>(model, "tagging accuracy", models::kTagging);
    double correct = 0, total = 0;
    const torch::Device device = nn::device_of(model);
    for (const auto& batch : batches) {
      if (batch.empty()) continue;
      const auto t = valid_.collate(batch).to(device);
      const auto& labels = t.fields.at("labels");
      const auto real = labels.ne(data::TaggingVocabulary::kPad);
      correct += predict_labels(tagger.tag(t.fields)).eq(labels).logical_and(real).sum().item<double>();
      total += real.sum().item<double>();
    }
    return {correct, total};
  }
  std::vector<std::pair<std::string, double>> values(const std::vector<double>& sums) const override {
    return {{"accuracy", sums[1] > 0 ? 100.0 * sums[0] / sums[1] : 0.0}};
  }

 private:
  const TaggingDataset& valid_;
};

class TaggingTask : public training::Task {
 public:
  explicit TaggingTask(const core::Config& cfg)
      : dir_(cfg.get<std::string>("task.data")), valid_subset_(cfg.get<std::string>("task.valid_subset")) {
    data_.info = data::read_tagging_data_info(dir_);
    for (const auto& [name, vocab] :
         {std::pair<std::string, data::TaggingVocabulary*>{"words", &data_.vocabularies.words},
          {"chars", &data_.vocabularies.chars},
          {"labels", &data_.vocabularies.labels}})
      *vocab = data::TaggingVocabulary::load(data::tagging_vocabulary_path(dir_, name));
    const auto pad_chars = data::pad_word_char_ids(data_.info.layout, data_.vocabularies.chars);
    const std::string train_subset = cfg.get<std::string>("task.train_subset");
    if (!data::tagging_split_exists(dir_, train_subset))
      throw Error(data::tagging_split_prefix(dir_, train_subset, "words") + ".idx: no such split");
    train_ = std::make_unique<TaggingDataset>(dir_, train_subset, data_.info.layout, pad_chars);
    if (data::tagging_split_exists(dir_, valid_subset_))
      valid_ = std::make_unique<TaggingDataset>(dir_, valid_subset_, data_.info.layout, pad_chars);
  }

  std::string name() const override { return "tagging"; }
  std::string model_family() const override { return models::kTagging; }
  models::ModelContext model_context() const override { return tagging_context(data_); }
  checkpoint::CheckpointMeta checkpoint_meta() const override {
    checkpoint::CheckpointMeta meta;
    meta.task = name();
    meta.data = tagging_meta_data(data_);
    return meta;
  }
  void check_resume(const checkpoint::CheckpointMeta& saved, const std::string& path) const override {
    for (const auto& [key, value] : tagging_meta_data(data_))
      if (saved.get(key) != value)
        throw Error(dir_ + ": its " + key + " differs from the one in " + path +
                    " (the checkpoint was trained on other data; resume with the same --data)");
  }

  const training::TaskDataset& train_data() const override { return *train_; }
  const training::TaskDataset* valid_data() const override { return valid_.get(); }
  std::string valid_subset() const override { return valid_subset_; }
  std::unique_ptr<training::Criterion> criterion(const core::Config& cfg) const override {
    const std::string name = cfg.get<std::string>("criterion.name");
    if (name != "cross_entropy" && name != "label_smoothed_cross_entropy")
      throw Error::for_key("criterion.name",
                           "the tagging task trains with cross_entropy or "
                           "label_smoothed_cross_entropy, not " +
                               name);
    return std::make_unique<TaggingCriterion>(name == "cross_entropy" ? 0.0
                                                                      : cfg.get<double>("criterion.label_smoothing"));
  }
  std::vector<training::MetricSpec> metrics() const override {
    if (!valid_) return {};
    return {{"accuracy", true}};
  }
  std::unique_ptr<training::Validator> validator(std::function<void(const std::string&)>) const override {
    if (!valid_) return nullptr;
    return std::make_unique<AccuracyValidator>(*valid_);
  }
  std::string describe() const override {
    const auto& v = data_.vocabularies;
    return "data " + dir_ + " (" + data::tag_column_name(data_.info.column) + ", " +
           data::vocab_protocol_name(data_.info.protocol) + " vocabularies): " + std::to_string(train_->size()) +
           " training chunks (" + std::to_string(train_->word_count()) + " words), " +
           (valid_ ? std::to_string(valid_->size()) + " validation chunks" : std::string("no validation")) +
           "; chunks of " + std::to_string(data_.info.layout.chunk_length) + " words, " +
           std::to_string(v.words.size()) + " words, " + std::to_string(v.chars.size()) + " characters, " +
           std::to_string(v.labels.size()) + " labels";
  }

 private:
  std::string dir_, valid_subset_;
  TaggingCheckpointData data_;
  std::unique_ptr<TaggingDataset> train_, valid_;
};

models::ModelContext tagging_context_from_meta(const checkpoint::CheckpointMeta& meta, const std::string& path) {
  return tagging_context(tagging_data_from_meta(meta, path));
}

core::Registrar<TaskSpec> tagging_task(
    task_registry(), "tagging",
    {"CoNLL-U tags binarized by csan-preprocess --task tagging; tagging models (arch tagger)", models::kTagging,
     [](core::ConfigSchema&) {}, [] { return std::map<std::string, core::Value>{}; },
     [](const core::Config& cfg) -> std::unique_ptr<training::Task> { return std::make_unique<TaggingTask>(cfg); },
     tagging_context_from_meta, tagging_generate_options, generate_tags, /*rebinarize_data=*/nullptr});

}  // namespace

std::map<std::string, std::string> tagging_meta_data(const TaggingCheckpointData& d) {
  std::map<std::string, std::string> out = {{"words_vocabulary", d.vocabularies.words.to_text()},
                                            {"chars_vocabulary", d.vocabularies.chars.to_text()},
                                            {"labels_vocabulary", d.vocabularies.labels.to_text()}};
  for (const auto& [key, value] : data::tagging_info_fields(d.info)) out[key] = value;
  return out;
}

TaggingCheckpointData tagging_data_from_meta(const checkpoint::CheckpointMeta& meta, const std::string& path) {
  TaggingCheckpointData d;
  auto vocabulary = [&](const std::string& name) {
    return data::TaggingVocabulary::parse(meta.get(name + "_vocabulary"), path + " (" + name + " vocabulary)");
  };
  d.vocabularies = {vocabulary("words"), vocabulary("chars"), vocabulary("labels")};
  std::vector<std::pair<std::string, std::string>> fields(meta.data.begin(), meta.data.end());
  d.info = data::tagging_info_from_fields(fields, path);
  return d;
}

models::ModelContext tagging_context(const TaggingCheckpointData& d) {
  const auto& v = d.vocabularies;
  return tagging_context(v.words.size(), v.chars.size(), v.labels.size(), d.info.layout);
}

}  // namespace csan::tasks
