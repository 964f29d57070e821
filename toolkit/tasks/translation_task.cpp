#include "toolkit/tasks/translation_task.h"

#include <filesystem>
#include <regex>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/option_table.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/generation/bleu_validation.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/tasks/translation_dataset.h"
#include "toolkit/tasks/translation_generate.h"
#include "toolkit/training/criterion.h"

CSAN_REGISTRATION_ANCHOR(translation_task)

namespace fs = std::filesystem;

namespace csan::tasks {

namespace {

struct TranslationOptions {
  std::string source_lang, target_lang;  // "": inferred from the data directory
  bool eval_bleu = false;
};

const core::OptionTable<TranslationOptions>& translation_option_table() {
  using O = TranslationOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("task.source_lang", &O::source_lang, "source language suffix (empty: inferred from the data directory)")
          .add("task.target_lang", &O::target_lang, "target language suffix (empty: inferred from the data directory)")
          .add("task.eval_bleu", &O::eval_bleu, "also validate with BLEU (settings: task.eval_bleu_*)");
  return table;
}

// Source and target suffixes from the recipe, or from the one SUBSET.X-Y.X.idx file pair
// in the data directory.
std::pair<std::string, std::string> languages(const TranslationOptions& o, const std::string& data_dir,
                                              const std::string& subset) {
  if (!o.source_lang.empty() && !o.target_lang.empty()) return {o.source_lang, o.target_lang};
  if (!fs::is_directory(data_dir)) throw Error(data_dir + ": no such data directory", ErrorKind::missing_file);
  const std::regex pattern(subset + R"(\.([^.\-]+)-([^.\-]+)\.([^.]+)\.idx)");
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& entry : fs::directory_iterator(data_dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern) && m[1] == m[3]) found.emplace_back(m[1], m[2]);
  }
  if (found.size() != 1)
    throw Error(data_dir + ": cannot infer the language pair (" + std::to_string(found.size()) + " candidates for " +
                subset + ".SRC-TGT.SRC.idx); set task.source_lang and task.target_lang");
  return found[0];
}

class BleuValidator : public training::Validator {
 public:
  BleuValidator(const generation::BleuValidationOptions& options, const data::LanguagePairDataset& valid,
                const text::Dictionary& tgt_dict, const std::string& spm_model,
                std::function<void(const std::string&)> log)
      : bleu_(options, valid, tgt_dict, spm_model, std::move(log)) {}
  std::vector<double> statistics(models::Model& model, const std::vector<data::Batch>& batches) override {
    return bleu_.statistics(
        models::as_family<models::EncoderDecoderModel>(model, "BLEU validation", models::kEncoderDecoder), batches);
  }
  std::vector<std::pair<std::string, double>> values(const std::vector<double>& sums) const override {
    return {{"bleu", bleu_.score(sums)}};
  }

 private:
  generation::BleuValidation bleu_;
};

class TranslationTask : public training::Task {
 public:
  explicit TranslationTask(const core::Config& cfg)
      : options_(translation_option_table().read(cfg)),
        bleu_options_(generation::bleu_validation_option_table().read(cfg)),
        data_dir_(cfg.get<std::string>("task.data")),
        valid_subset_(cfg.get<std::string>("task.valid_subset")) {
    const std::string train_subset = cfg.get<std::string>("task.train_subset");
    std::tie(src_lang_, tgt_lang_) = languages(options_, data_dir_, train_subset);
    const std::string src_dict_path = data_dir_ + "/dict." + src_lang_ + ".txt";
    const std::string tgt_dict_path = data_dir_ + "/dict." + tgt_lang_ + ".txt";
    src_dict_bytes_ = read_file(src_dict_path);
    tgt_dict_bytes_ = read_file(tgt_dict_path);
    spm_model_ = read_if_exists(data_dir_ + "/spm.model");
    src_dict_ = text::Dictionary::parse(src_dict_bytes_, src_dict_path);
    tgt_dict_ = text::Dictionary::parse(tgt_dict_bytes_, tgt_dict_path);
    if (src_dict_.pad() != tgt_dict_.pad() || src_dict_.eos() != tgt_dict_.eos())
      throw Error("source and target dictionaries disagree on <pad>/</s>");
    const int64_t pad = tgt_dict_.pad();
    // The decoder's first input: </s>, or <pad> for an imported Marian model (model.decoder_start).
    const int64_t decoder_start =
        cfg.has("model.decoder_start") && cfg.get<std::string>("model.decoder_start") == "pad" ? pad : tgt_dict_.eos();
    const PositionLimits limits = PositionLimits::of(cfg);
    train_ = std::make_unique<TranslationDataset>(data_dir_, train_subset, src_lang_, tgt_lang_, pad, decoder_start,
                                                  src_dict_, tgt_dict_, limits, /*skip_too_long=*/true);
    if (!cfg.get<bool>("dataset.disable_validation") &&
        fs::exists(data_dir_ + "/" + valid_subset_ + "." + src_lang_ + "-" + tgt_lang_ + "." + src_lang_ + ".idx"))
      valid_ = std::make_unique<TranslationDataset>(data_dir_, valid_subset_, src_lang_, tgt_lang_, pad, decoder_start,
                                                    src_dict_, tgt_dict_, limits, /*skip_too_long=*/false);
  }

  std::string name() const override { return "translation"; }
  std::string model_family() const override { return models::kEncoderDecoder; }
  models::ModelContext model_context() const override { return translation_context(src_dict_, tgt_dict_); }

  checkpoint::CheckpointMeta checkpoint_meta() const override {
    checkpoint::CheckpointMeta meta;
    meta.task = name();
    meta.data = {{"src_lang", src_lang_},
                 {"tgt_lang", tgt_lang_},
                 {"src_dict", src_dict_bytes_},
                 {"tgt_dict", tgt_dict_bytes_},
                 {"spm_model", spm_model_}};
    return meta;
  }

  void check_resume(const checkpoint::CheckpointMeta& saved, const std::string& path) const override {
    auto refuse = [&](const std::string& key, const std::string& saved_value, const std::string& current_value) {
      throw Error(key + " is '" + current_value + "' but '" + saved_value + "' in " + path +
                  ", whose model cannot resume with it (use another --save-dir, or --restore-file)");
    };
    if (saved.get("src_lang") != src_lang_) refuse("task.source_lang", saved.get("src_lang"), src_lang_);
    if (saved.get("tgt_lang") != tgt_lang_) refuse("task.target_lang", saved.get("tgt_lang"), tgt_lang_);
    auto same_file = [&](const std::string& saved_bytes, const std::string& current_bytes, const std::string& file) {
      if (saved_bytes != current_bytes)
        throw Error(file + ": differs from the one in " + path +
                    " (the checkpoint was trained on other data: resume with the same --data, add "
                    "--reuse-dictionaries to re-binarize the new data with the checkpoint's, or binarize it with "
                    "csan-preprocess --from-checkpoint " +
                    path + ")");
    };
    same_file(saved.get("src_dict"), src_dict_bytes_, data_dir_ + "/dict." + src_lang_ + ".txt");
    same_file(saved.get("tgt_dict"), tgt_dict_bytes_, data_dir_ + "/dict." + tgt_lang_ + ".txt");
    same_file(saved.get("spm_model"), spm_model_, data_dir_ + "/spm.model");
  }
  std::vector<std::string> keys_checked_through_data() const override {
    return {"task.source_lang", "task.target_lang"};
  }

  const training::TaskDataset& train_data() const override { return *train_; }
  const training::TaskDataset* valid_data() const override { return valid_.get(); }
  std::string valid_subset() const override { return valid_subset_; }
  std::unique_ptr<training::Criterion> criterion(const core::Config& cfg) const override {
    return training::build_criterion(cfg, tgt_dict_.pad());
  }
  std::vector<training::MetricSpec> metrics() const override {
    if (!options_.eval_bleu) return {};
    return {{"bleu", true}};
  }
  std::unique_ptr<training::Validator> validator(std::function<void(const std::string&)> log) const override {
    if (!options_.eval_bleu || !valid_) return nullptr;
    return std::make_unique<BleuValidator>(bleu_options_, valid_->pairs(), tgt_dict_, spm_model_, std::move(log));
  }
  std::string describe() const override {
    const bool joined = src_dict_ == tgt_dict_;
    return "data " + data_dir_ + " (" + src_lang_ + " -> " + tgt_lang_ + "): " + std::to_string(train_->size()) +
           " training pairs" +
           (train_->skipped()
                ? " (" + std::to_string(train_->skipped()) + " longer than the model's positions left out)"
                : std::string()) +
           ", " + (valid_ ? std::to_string(valid_->size()) : std::string("no")) + " validation pairs; dictionaries " +
           std::to_string(src_dict_.size()) + " / " + std::to_string(tgt_dict_.size()) + (joined ? " (joined)" : "");
  }

 private:
  TranslationOptions options_;
  generation::BleuValidationOptions bleu_options_;
  std::string data_dir_, valid_subset_, src_lang_, tgt_lang_;
  std::string src_dict_bytes_, tgt_dict_bytes_, spm_model_;
  text::Dictionary src_dict_, tgt_dict_;
  std::unique_ptr<TranslationDataset> train_, valid_;
};

models::ModelContext translation_context_from_meta(const checkpoint::CheckpointMeta& meta, const std::string& path) {
  return translation_context(text::Dictionary::parse(meta.get("src_dict"), path + " (source dictionary)"),
                             text::Dictionary::parse(meta.get("tgt_dict"), path + " (target dictionary)"));
}

core::Registrar<TaskSpec> translation_task(
    task_registry(), "translation",
    {"a language pair binarized by csan-preprocess; encoder-decoder models", models::kEncoderDecoder,
     [](core::ConfigSchema& s) {
       translation_option_table().declare(s, /*with_defaults=*/false);
       generation::bleu_validation_option_table().declare(s, /*with_defaults=*/false);
     },
     [] {
       auto defaults = translation_option_table().defaults();
       for (const auto& [key, value] : generation::bleu_validation_option_table().defaults()) defaults[key] = value;
       return defaults;
     },
     [](const core::Config& cfg) -> std::unique_ptr<training::Task> { return std::make_unique<TranslationTask>(cfg); },
     translation_context_from_meta, translation_generate_options, generate_translations,
     commands::rebinarize_with_checkpoint});

}  // namespace

training::TensorBatch translation_batch(const data::CollatedBatch& c) {
  training::TensorBatch t;
  t.nsentences = c.nsentences();
  t.ntokens = c.ntokens;
  if (t.nsentences == 0) return t;
  t.fields.set("src_tokens", training::to_tensor(c.src_tokens));
  t.fields.set("src_lengths", torch::tensor(c.src_lengths, torch::kLong));
  t.fields.set("prev_output_tokens", training::to_tensor(c.prev_output_tokens));
  t.fields.set("target", training::to_tensor(c.target));
  return t;
}

models::ModelContext translation_context(const text::Dictionary& src_dict, const text::Dictionary& tgt_dict) {
  return models::ModelContext::translation(src_dict.size(), tgt_dict.size(), tgt_dict.pad(), src_dict == tgt_dict);
}

}  // namespace csan::tasks
