// The multilingual_translation task (fairseq's translation_multi_simple_epoch): one
// encoder-decoder model over several language pairs of one data directory written by
// csan-preprocess --task multilingual_translation (one joint dictionary holding the
// language tokens __LANG__, DIR/SPLIT.SRC-TGT.{SRC,TGT}.{bin,idx} per pair). The
// target-language token steers the model: put before the source
// (task.lang_tok_style encoder) or given to the decoder as its first input (decoder).
// Training draws from the pairs by temperature sampling (task.sampling_temperature);
// validation reports the loss (and BLEU) of each pair beside the overall loss.
// csan-generate translates one pair of the model: --source-lang and --target-lang.
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/option_table.h"
#include "toolkit/data/lang_pairs.h"
#include "toolkit/generation/bleu_validation.h"
#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/tasks/multilingual_steering.h"
#include "toolkit/tasks/task_registry.h"
#include "toolkit/tasks/translation_dataset.h"
#include "toolkit/tasks/translation_generate.h"
#include "toolkit/tasks/translation_generate_run.h"
#include "toolkit/training/criterion.h"

CSAN_REGISTRATION_ANCHOR(multilingual_task)

namespace csan::tasks {

namespace {

using data::LangPair;

struct MultilingualOptions {
  std::string lang_pairs;
  double sampling_temperature = 1.0;
  std::string lang_tok_style = "encoder";
  bool eval_bleu = false;
};

const core::OptionTable<MultilingualOptions>& multilingual_option_table() {
  using O = MultilingualOptions;
  static const auto table =
      core::OptionTable<O>()
          .add("task.lang_pairs", &O::lang_pairs, "language pairs, comma-separated (en-de,de-en,en-fr)")
          .add("task.sampling_temperature", &O::sampling_temperature,
               "draw training pairs with p_i ~ (n_i / N)^(1/T), T > 0 (1: as the data, every pair once; "
               "larger: closer to uniform)")
          .add("task.lang_tok_style", &O::lang_tok_style,
               "where the target-language token __TGT__ goes: encoder (before the source, fairseq's "
               "--encoder-langtok tgt) or decoder (the decoder's first input instead of </s>, fairseq's "
               "--decoder-langtok --lang-tok-replacing-bos-eos)",
               {"encoder", "decoder"})
          .add("task.eval_bleu", &O::eval_bleu, "also validate with BLEU (settings: task.eval_bleu_*)");
  return table;
}

// The examples of several pairs as one dataset: entry k is (pair, example of that pair's
// dataset). Training entries are a temperature sample; validation takes every example.
class MultiPairDataset : public training::TaskDataset {
 public:
  MultiPairDataset(const std::vector<std::unique_ptr<TranslationDataset>>& parts,
                   const std::vector<std::vector<int64_t>>& picks, int64_t pad, int64_t eos)
      : parts_(parts), pad_(pad), eos_(eos) {
    for (size_t p = 0; p < picks.size(); ++p)
      for (int64_t i : picks[p]) {
        entries_.emplace_back(p, i);
        src_sizes_.push_back(parts[p]->source_sizes()[static_cast<size_t>(i)]);
        tgt_sizes_.push_back(parts[p]->target_sizes()[static_cast<size_t>(i)]);
      }
  }
  size_t size() const override { return entries_.size(); }
  const std::vector<int32_t>& source_sizes() const override { return src_sizes_; }
  const std::vector<int32_t>& target_sizes() const override { return tgt_sizes_; }
  training::TensorBatch collate(const data::Batch& batch) const override {
    std::vector<std::vector<int64_t>> sources, targets;
    std::vector<int64_t> starts;
    for (int64_t k : batch) {
      const auto& [p, i] = entries_[static_cast<size_t>(k)];
      const auto& pairs = parts_[p]->pairs();
      const int64_t stored = parts_[p]->stored_index(static_cast<size_t>(i));
      sources.push_back(pairs.source(stored));
      targets.push_back(pairs.target(stored));
      starts.push_back(pairs.decoder_start());
    }
    data::CollatedBatch collated = data::collate_pairs(batch, sources, targets, pad_, eos_);
    // Each pair's decoder starts from its own token (decoder language tokens).
    for (size_t r = 0; r < starts.size(); ++r)
      collated.prev_output_tokens.values[r * static_cast<size_t>(collated.prev_output_tokens.cols)] = starts[r];
    return translation_batch(collated);
  }
  // The batch's examples of each pair, as indices of that pair's dataset.
  std::vector<data::Batch> split_by_pair(const data::Batch& batch) const {
    std::vector<data::Batch> by_pair(parts_.size());
    for (int64_t k : batch) {
      const auto& [p, i] = entries_[static_cast<size_t>(k)];
      by_pair[p].push_back(i);
    }
    return by_pair;
  }

 private:
  const std::vector<std::unique_ptr<TranslationDataset>>& parts_;
  int64_t pad_, eos_;
  std::vector<std::pair<size_t, int64_t>> entries_;
  std::vector<int32_t> src_sizes_, tgt_sizes_;
};

// Loss (and BLEU) of each pair: every validation batch is split by pair and each part
// scored on its own, so the figures are those of the pair's validation set alone.
class PerPairValidator : public training::Validator {
 public:
  PerPairValidator(std::vector<LangPair> pairs, const std::vector<std::unique_ptr<TranslationDataset>>& valid,
                   const MultiPairDataset& all, std::unique_ptr<training::Criterion> criterion,
                   std::vector<std::unique_ptr<generation::BleuValidation>> bleu)
      : pairs_(std::move(pairs)), valid_(valid), all_(all), criterion_(std::move(criterion)), bleu_(std::move(bleu)) {}

  std::vector<double> statistics(models::Model& model, const std::vector<data::Batch>& batches) override {
    const size_t width = kLossStats + (bleu_.empty() ? 0 : bleu_stats());
    std::vector<double> sums(pairs_.size() * width, 0.0);
    const torch::Device device = nn::device_of(model);
    torch::NoGradGuard no_grad;
    model.eval();
    std::vector<std::vector<data::Batch>> pair_batches(pairs_.size());
    for (const auto& batch : batches) {
      const auto parts = all_.split_by_pair(batch);
      for (size_t p = 0; p < parts.size(); ++p) {
        if (parts[p].empty()) continue;
        const auto out = criterion_->compute(model, valid_[p]->collate(parts[p]).to(device));
        double* s = &sums[p * width];
        s[0] += out.loss_sum;
        s[1] += out.nll_sum;
        s[2] += static_cast<double>(out.sample_size);
        pair_batches[p].push_back(parts[p]);
      }
    }
    for (size_t p = 0; p < bleu_.size(); ++p) {
      auto& decoder = models::as_family<models::EncoderDecoderModel>(model, "BLEU validation", models::kEncoderDecoder);
      const auto stats = bleu_[p]->statistics(decoder, pair_batches[p]);
      std::copy(stats.begin(), stats.end(), sums.begin() + static_cast<std::ptrdiff_t>(p * width + kLossStats));
    }
    return sums;
  }

  std::vector<std::pair<std::string, double>> values(const std::vector<double>& sums) const override {
    const size_t width = kLossStats + (bleu_.empty() ? 0 : bleu_stats());
    std::vector<std::pair<std::string, double>> out;
    for (size_t p = 0; p < pairs_.size(); ++p) {
      const double* s = &sums[p * width];
      out.emplace_back("loss_" + pairs_[p].name(), training::base2(s[0], s[2]));
      out.emplace_back("nll_loss_" + pairs_[p].name(), training::base2(s[1], s[2]));
      if (!bleu_.empty())
        out.emplace_back("bleu_" + pairs_[p].name(), bleu_[p]->score(std::vector<double>(s + kLossStats, s + width)));
    }
    return out;
  }

 private:
  static constexpr size_t kLossStats = 3;  // loss, nll, sample size
  static size_t bleu_stats() { return 2 + 2 * scoring::kBleuMaxOrder; }

  std::vector<LangPair> pairs_;
  const std::vector<std::unique_ptr<TranslationDataset>>& valid_;
  const MultiPairDataset& all_;
  std::unique_ptr<training::Criterion> criterion_;
  std::vector<std::unique_ptr<generation::BleuValidation>> bleu_;
};

class MultilingualTask : public training::Task {
 public:
  explicit MultilingualTask(const core::Config& cfg)
      : cfg_(cfg),
        options_(multilingual_option_table().read(cfg)),
        bleu_options_(generation::bleu_validation_option_table().read(cfg)),
        data_dir_(cfg.get<std::string>("task.data")),
        valid_subset_(cfg.get<std::string>("task.valid_subset")) {
    if (options_.lang_pairs.empty())
      throw Error::for_key("task.lang_pairs", "is required by task multilingual_translation (e.g. en-de,de-en)");
    pairs_ = data::parse_lang_pairs(options_.lang_pairs, "task.lang_pairs");
    read_dictionary();
    const int64_t pad = dict_.pad(), eos = dict_.eos();
    const PositionLimits limits = PositionLimits::of(cfg);
    const std::string train_subset = cfg.get<std::string>("task.train_subset");
    const bool validate = !cfg.get<bool>("dataset.disable_validation");
    for (const auto& pair : pairs_) {
      const LangTokens tokens = lang_tokens(options_.lang_tok_style, dict_, pair.tgt, dict_path(pair.tgt));
      const int64_t start = tokens.decoder_start >= 0 ? tokens.decoder_start : eos;
      train_parts_.push_back(std::make_unique<TranslationDataset>(
          data_dir_, train_subset, pair.src, pair.tgt, pad, start, dict_, dict_, limits, true, tokens.source_prefix));
      if (validate)
        valid_parts_.push_back(std::make_unique<TranslationDataset>(data_dir_, valid_subset_, pair.src, pair.tgt, pad,
                                                                    start, dict_, dict_, limits, false,
                                                                    tokens.source_prefix));
    }
    std::vector<int64_t> sizes;
    for (const auto& part : train_parts_) sizes.push_back(static_cast<int64_t>(part->size()));
    ratios_ = data::temperature_sampling_ratios(sizes, options_.sampling_temperature, "task.sampling_temperature");
    // T = 1 is every example once (fairseq's concat); another T a seeded sample of the
    // fairseq epoch size, drawn once per run (fairseq redraws it every epoch).
    counts_ = options_.sampling_temperature == 1.0 ? sizes : data::sampled_counts(sizes, ratios_);
    std::vector<std::vector<int64_t>> picks;
    const auto seed = static_cast<uint64_t>(cfg.get<int64_t>("common.seed"));
    for (size_t p = 0; p < sizes.size(); ++p) picks.push_back(data::sample_indices(sizes[p], counts_[p], seed + p));
    train_ = std::make_unique<MultiPairDataset>(train_parts_, picks, pad, eos);
    if (validate) {
      std::vector<std::vector<int64_t>> all;
      for (const auto& part : valid_parts_) all.push_back(data::sample_indices(part->size(), part->size(), 0));
      valid_ = std::make_unique<MultiPairDataset>(valid_parts_, all, pad, eos);
    }
  }

  std::string name() const override { return kMultilingualTask; }
  std::string model_family() const override { return models::kEncoderDecoder; }
  models::ModelContext model_context() const override { return translation_context(dict_, dict_); }

  checkpoint::CheckpointMeta checkpoint_meta() const override {
    checkpoint::CheckpointMeta meta;
    meta.task = name();
    meta.data = {{"lang_pairs", data::format_lang_pairs(pairs_)},
                 {"lang_tok_style", options_.lang_tok_style},
                 {"src_lang", pairs_.front().src},
                 {"tgt_lang", pairs_.front().tgt},
                 {"src_dict", dict_bytes_},
                 {"tgt_dict", dict_bytes_},
                 {"spm_model", spm_model_}};
    return meta;
  }

  void check_resume(const checkpoint::CheckpointMeta& saved, const std::string& path) const override {
    auto same = [&](const std::string& what, const std::string& saved_value, const std::string& current) {
      if (saved_value != current)
        throw Error(what + " differs from the one in " + path +
                    ", whose model cannot resume with it (use another --save-dir, or the same data and recipe)");
    };
    same("task.lang_pairs", saved.get("lang_pairs"), data::format_lang_pairs(pairs_));
    same("task.lang_tok_style", saved.get("lang_tok_style"), options_.lang_tok_style);
    same(dict_path(pairs_.front().src), saved.get("src_dict"), dict_bytes_);
    same(data_dir_ + "/spm.model", saved.get("spm_model"), spm_model_);
  }

  const training::TaskDataset& train_data() const override { return *train_; }
  const training::TaskDataset* valid_data() const override { return valid_.get(); }
  std::string valid_subset() const override { return valid_subset_; }
  std::unique_ptr<training::Criterion> criterion(const core::Config& cfg) const override {
    return training::build_criterion(cfg, dict_.pad());
  }
  std::vector<training::MetricSpec> metrics() const override {
    std::vector<training::MetricSpec> specs;
    for (const auto& pair : pairs_) {
      specs.push_back({"loss_" + pair.name(), false});
      specs.push_back({"nll_loss_" + pair.name(), false});
      if (options_.eval_bleu) specs.push_back({"bleu_" + pair.name(), true});
    }
    return specs;
  }
  std::unique_ptr<training::Validator> validator(std::function<void(const std::string&)> log) const override {
    if (!valid_) return nullptr;
    std::vector<std::unique_ptr<generation::BleuValidation>> bleu;
    if (options_.eval_bleu)
      for (const auto& part : valid_parts_)
        bleu.push_back(
            std::make_unique<generation::BleuValidation>(bleu_options_, part->pairs(), dict_, spm_model_, log));
    return std::make_unique<PerPairValidator>(pairs_, valid_parts_, *valid_, criterion(cfg_), std::move(bleu));
  }
  std::string describe() const override {
    std::string parts;
    for (size_t p = 0; p < pairs_.size(); ++p)
      parts += (p ? ", " : "") + pairs_[p].name() + " " + std::to_string(train_parts_[p]->size()) + " -> " +
               std::to_string(counts_[p]) + " (p " + std::to_string(ratios_[p]).substr(0, 6) + ")";
    return "data " + data_dir_ + " (" + std::to_string(pairs_.size()) + " pairs, language tokens on the " +
           options_.lang_tok_style + " side): training pairs per epoch " + parts + " at sampling temperature " +
           std::to_string(options_.sampling_temperature).substr(0, 5) + "; " +
           (valid_ ? std::to_string(valid_->size()) : std::string("no")) + " validation pairs; dictionary " +
           std::to_string(dict_.size());
  }

 private:
  std::string dict_path(const std::string& lang) const { return data_dir_ + "/dict." + lang + ".txt"; }

  // One joint dictionary: dict.LANG.txt of every language, all the same.
  void read_dictionary() {
    for (const auto& lang : data::pair_languages(pairs_)) {
      if (!std::filesystem::exists(dict_path(lang)))
        throw Error::for_key("task.lang_pairs",
                             "language '" + lang + "' is not in " + data_dir_ + " (no dict." + lang + ".txt)");
      const std::string bytes = read_file(dict_path(lang));
      if (dict_bytes_.empty()) {
        dict_bytes_ = bytes;
        dict_ = text::Dictionary::parse(bytes, dict_path(lang));
      } else if (bytes != dict_bytes_) {
        throw Error(dict_path(lang) +
                    ": differs from the other languages' dictionaries (a multilingual model has "
                    "one joint dictionary: csan-preprocess --task multilingual_translation)");
      }
    }
    spm_model_ = read_if_exists(data_dir_ + "/spm.model");
  }

  core::Config cfg_;
  MultilingualOptions options_;
  generation::BleuValidationOptions bleu_options_;
  std::string data_dir_, valid_subset_;
  std::vector<LangPair> pairs_;
  std::string dict_bytes_, spm_model_;
  text::Dictionary dict_;
  std::vector<std::unique_ptr<TranslationDataset>> train_parts_, valid_parts_;
  std::vector<double> ratios_;
  std::vector<int64_t> counts_;
  std::unique_ptr<MultiPairDataset> train_, valid_;
};

// csan-generate: the ensemble of translation checkpoints, steered to --target-lang.
void generate_multilingual(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                           std::ostream& log) {
  validate_generate_options(options);
  const checkpoint::CheckpointMeta meta = first.meta();
  const LangPair pair =
      multilingual_pair(meta, first.path(), options.source_lang, options.target_lang, "--source-lang", "--target-lang");
  DecodingModels loaded = load_for_decoding(options.paths, options.precision, options.cpu, first, log);
  steer_to_pair(loaded.ensemble, meta, pair, first.path());
  GenerateOptions effective = options;
  effective.precision = loaded.precision;
  translate(effective, loaded.ensemble, out, log);
}

core::Registrar<TaskSpec> multilingual_task(
    task_registry(), kMultilingualTask,
    {"several language pairs in one encoder-decoder model, steered by language tokens", models::kEncoderDecoder,
     [](core::ConfigSchema& s) {
       multilingual_option_table().declare(s, /*with_defaults=*/false);
       generation::bleu_validation_option_table().declare(s, /*with_defaults=*/false);
     },
     [] {
       auto defaults = multilingual_option_table().defaults();
       for (const auto& [key, value] : generation::bleu_validation_option_table().defaults()) defaults[key] = value;
       return defaults;
     },
     [](const core::Config& cfg) -> std::unique_ptr<training::Task> { return std::make_unique<MultilingualTask>(cfg); },
     [](const checkpoint::CheckpointMeta& meta, const std::string& path) {
       const auto dict = text::Dictionary::parse(meta.get("src_dict"), path + " (dictionary)");
       return translation_context(dict, dict);
     },
     translation_generate_options, generate_multilingual, /*rebinarize_data=*/nullptr});

}  // namespace

}  // namespace csan::tasks
