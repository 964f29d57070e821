#include "toolkit/data/preprocess.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/binarizer.h"
#include "toolkit/data/parallel_corpus.h"
#include "toolkit/data/preprocess_settings.h"
#include "toolkit/data/stage_progress.h"
#include "toolkit/text/dictionary.h"

namespace fs = std::filesystem;

namespace csan::data {

namespace {

using text::Dictionary;
using text::SentencePieceModel;

void validate(const PreprocessOptions& o) {
  if (o.source_lang.empty()) throw Error::for_key("source-lang", "is required");
  if (!o.only_source && o.target_lang.empty())
    throw Error::for_key("target-lang", "is required unless --only-source is given");
  if (!o.only_source && o.source_lang == o.target_lang)
    throw Error::for_key("target-lang", "must differ from --source-lang");
  if (o.destdir.empty()) throw Error::for_key("destdir", "is required");
  if (o.workers < 1) throw Error::for_key("workers", "must be at least 1");
  if (o.padding_factor < 1) throw Error::for_key("padding-factor", "must be at least 1");
  if (o.filter.min_len < 0) throw Error::for_key("min-len", "must not be negative");
  if (o.filter.max_len < 0) throw Error::for_key("max-len", "must not be negative (0: no limit)");
  if (!(o.filter.max_len_ratio >= 0)) throw Error::for_key("max-len-ratio", "must not be negative (0: no limit)");
  // fairseq reads any count <= 0 as "all"; only -1 is documented, so -7 is a typo.
  if (o.nwordssrc == 0 || o.nwordssrc < -1)
    throw Error::for_key("nwordssrc", "must be -1 (keep all) or a positive count, got " + std::to_string(o.nwordssrc));
  if (o.nwordstgt == 0 || o.nwordstgt < -1)
    throw Error::for_key("nwordstgt", "must be -1 (keep all) or a positive count, got " + std::to_string(o.nwordstgt));
  if (o.thresholdsrc < 0) throw Error::for_key("thresholdsrc", "must not be negative");
  if (o.thresholdtgt < 0) throw Error::for_key("thresholdtgt", "must not be negative");
  if (o.spm.input_sentence_size < 0)
    throw Error::for_key("spm-input-sentence-size", "must not be negative (0: all sentences)");
  if (o.joined_dictionary && !o.tgtdict.empty())
    throw Error::for_key("tgtdict", "cannot be combined with --joined-dictionary (use --srcdict)");
  if (o.joined_dictionary && o.only_source)
    throw Error::for_key("joined-dictionary", "needs a target language (not with --only-source)");
  if (!o.spm_model.empty() && o.spm_per_language)
    throw Error::for_key("spm-per-language", "cannot be combined with --spm-model");
  const bool dicts_given = !o.srcdict.empty() && (o.only_source || o.joined_dictionary || !o.tgtdict.empty());
  if (o.trainpref.empty() && (o.spm_model.empty() || !dicts_given))
    throw Error::for_key("trainpref", "is required unless --spm-model and the dictionaries are given");
}

std::vector<std::string> languages(const PreprocessOptions& o) {
  if (o.only_source) return {o.source_lang};
  return {o.source_lang, o.target_lang};
}

std::string describe_filters(const PreprocessOptions& o, const PreprocessSummary& s) {
  return std::to_string(s.train_lines_read) + " lines read; removed " + std::to_string(s.filtered.too_short) +
         " shorter than --min-len " + std::to_string(o.filter.min_len) + ", " + std::to_string(s.filtered.too_long) +
         " longer than --max-len " + std::to_string(o.filter.max_len) + ", " + std::to_string(s.filtered.ratio) +
         " over --max-len-ratio";
}

// State of one run, so each stage is a short method.
class Pipeline {
 public:
  explicit Pipeline(const PreprocessOptions& o) : o_(o), langs_(languages(o)) {}

  PreprocessSummary run() {
    const auto start = std::chrono::steady_clock::now();
    validate(o_);
    summary_.removed_temporaries = remove_stale_temporaries(o_.destdir);
    const std::string settings = render_settings(settings_of(o_));
    check_destination(o_.destdir, settings);
    AtomicDirectory out(o_.destdir);
    dir_ = out.staging();

    ParallelText train;
    if (!o_.trainpref.empty()) train = read_corpus("train", o_.trainpref);
    prepare_models(train);
    std::vector<PieceCorpus> train_pieces;
    std::vector<bool> keep;
    if (!o_.trainpref.empty()) {
      train_pieces = encode_train(train);
      train = ParallelText();  // the raw text is no longer needed
      keep = filter_train(train_pieces);
    }
    prepare_dictionaries(train_pieces, keep);
    if (!o_.trainpref.empty()) binarize_train(train_pieces, keep);
    train_pieces.clear();

    binarize_extra_splits("valid", o_.validpref);
    binarize_extra_splits("test", o_.testpref);

    write_file_atomically((fs::path(dir_) / kSettingsFile).string(), settings);
    out.commit();
    summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary_;
  }

 private:
  std::string staged(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // "a.de, a.en, b.de, b.en": the files of these prefixes, for messages.
  std::string corpus_files(const std::vector<std::string>& prefixes) const {
    std::string files;
    for (const auto& prefix : prefixes)
      for (const auto& lang : langs_) files += (files.empty() ? "" : ", ") + prefix + "." + lang;
    return files;
  }
  // "a.de, b.de": the files of language l.
  std::string language_files(const std::vector<std::string>& prefixes, size_t l) const {
    std::string files;
    for (const auto& prefix : prefixes) files += (files.empty() ? "" : ", ") + prefix + "." + langs_[l];
    return files;
  }

  // A split without a single line is a wrong prefix or an unfinished download, never data.
  ParallelText read_corpus(const std::string& split, const std::vector<std::string>& prefixes) const {
    ParallelText text = read_parallel_text(prefixes, langs_);
    if (text.size() == 0) throw Error(corpus_files(prefixes) + ": the " + split + " split has no lines");
    // Blank targets of a test set are a common placeholder; a blank training side
    // would only abort SentencePiece or give an empty dictionary.
    if (split != "train") return text;
    for (size_t l = 0; l < langs_.size(); ++l) {
      const auto& lines = text.lines[l];
      if (std::all_of(lines.begin(), lines.end(),
                      [](const std::string& line) { return line.find_first_not_of(" \t\r\f\v") == std::string::npos; }))
        throw Error(language_files(prefixes, l) + ": the " + split + " split has only empty lines");
    }
    return text;
  }

  void prepare_models(const ParallelText& train) {
    if (!o_.spm_model.empty()) {
      auto model = std::make_shared<SentencePieceModel>(SentencePieceModel::load(o_.spm_model));
      model->save(staged("spm.model"));
      models_.assign(langs_.size(), model);
      return;
    }
    if (o_.spm_per_language && langs_.size() > 1) {
      for (size_t l = 0; l < langs_.size(); ++l) {
        auto model = std::make_shared<SentencePieceModel>(SentencePieceModel::train({&train.lines[l]}, o_.spm));
        model->save(staged("spm." + langs_[l] + ".model"));
        models_.push_back(model);
      }
      return;
    }
    std::vector<const std::vector<std::string>*> corpora;
    for (const auto& lines : train.lines) corpora.push_back(&lines);
    auto model = std::make_shared<SentencePieceModel>(SentencePieceModel::train(corpora, o_.spm));
    model->save(staged("spm.model"));
    models_.assign(langs_.size(), model);
  }

  std::vector<PieceCorpus> encode_train(const ParallelText& train) {
    std::vector<PieceCorpus> pieces;
    for (size_t l = 0; l < langs_.size(); ++l) {
      StageProgress progress("encode lines of train." + langs_[l], static_cast<long long>(train.size()), o_.progress);
      pieces.push_back(encode_corpus(*models_[l], train.lines[l], o_.workers, progress.counter()));
    }
    return pieces;
  }

  std::vector<bool> filter_train(const std::vector<PieceCorpus>& pieces) {
    const size_t n = pieces[0].lines();
    summary_.train_lines_read = static_cast<int64_t>(n);
    std::vector<bool> keep(n, true);
    size_t kept = n;
    if (o_.filter.active()) {
      for (size_t i = 0; i < n; ++i) {
        auto verdict = o_.filter.check(pieces[0].length(i), pieces.size() > 1 ? pieces[1].length(i) : -1);
        if (verdict == LengthFilter::Verdict::kKeep) continue;
        keep[i] = false;
        --kept;
        summary_.filtered.add(verdict);
      }
    }
    if (kept == 0)
      throw Error(corpus_files(o_.trainpref) + ": no training pair is left after filtering (" +
                  describe_filters(o_, summary_) + ")");
    return keep;
  }

  void prepare_dictionaries(const std::vector<PieceCorpus>& pieces, const std::vector<bool>& keep) {
    auto from_train = [&](std::vector<size_t> lang_indices, int64_t threshold, int64_t nwords) {
      std::vector<const PieceCorpus*> corpora;
      for (size_t l : lang_indices) corpora.push_back(&pieces[l]);
      return std::make_shared<Dictionary>(build_dictionary(corpora, keep, threshold, nwords, o_.padding_factor));
    };
    auto loaded = [](const std::string& path) { return std::make_shared<Dictionary>(Dictionary::load(path)); };

    if (o_.joined_dictionary) {
      auto dict = !o_.srcdict.empty() ? loaded(o_.srcdict) : from_train({0, 1}, o_.thresholdsrc, o_.nwordssrc);
      dicts_.assign(langs_.size(), dict);
    } else {
      dicts_.push_back(!o_.srcdict.empty() ? loaded(o_.srcdict) : from_train({0}, o_.thresholdsrc, o_.nwordssrc));
      if (langs_.size() > 1)
        dicts_.push_back(!o_.tgtdict.empty() ? loaded(o_.tgtdict) : from_train({1}, o_.thresholdtgt, o_.nwordstgt));
    }
    for (size_t l = 0; l < langs_.size(); ++l) {
      dicts_[l]->save(staged("dict." + langs_[l] + ".txt"));
      summary_.dictionary_sizes.emplace_back(langs_[l], dicts_[l]->size());
    }
  }

  void write_split(const std::string& split, size_t l, const BinarizedSplit& data) {
    write_dataset(dataset_prefix(dir_, split, o_.source_lang, o_.target_lang, langs_[l]), data,
                  static_cast<size_t>(dicts_[l]->size()));
    summary_.splits.push_back({split, langs_[l], static_cast<int64_t>(data.sizes.size()), data.tokens(), data.unknown});
  }

  void binarize_train(const std::vector<PieceCorpus>& pieces, const std::vector<bool>& keep) {
    for (size_t l = 0; l < langs_.size(); ++l) {
      StageProgress progress("binarize lines of train." + langs_[l], static_cast<long long>(pieces[l].lines()),
                             o_.progress);
      write_split("train", l, binarize_corpus(*dicts_[l], pieces[l], keep, o_.workers, progress.counter()));
    }
  }

  void binarize_extra_splits(const std::string& name, const std::vector<std::string>& prefixes) {
    for (size_t k = 0; k < prefixes.size(); ++k) {
      const std::string split = k == 0 ? name : name + std::to_string(k);
      ParallelText text = read_corpus(split, {prefixes[k]});
      for (size_t l = 0; l < langs_.size(); ++l) {
        StageProgress progress("encode+binarize lines of " + split + "." + langs_[l],
                               static_cast<long long>(text.size()), o_.progress);
        write_split(split, l,
                    encode_and_binarize(*models_[l], *dicts_[l], text.lines[l], o_.workers, progress.counter()));
      }
    }
  }

  const PreprocessOptions& o_;
  std::vector<std::string> langs_;
  std::string dir_;
  std::vector<std::shared_ptr<SentencePieceModel>> models_;
  std::vector<std::shared_ptr<Dictionary>> dicts_;
  PreprocessSummary summary_;
};

}  // namespace

std::string dataset_prefix(const std::string& destdir, const std::string& split, const std::string& source_lang,
                           const std::string& target_lang, const std::string& lang) {
  std::string name = split + ".";
  if (!target_lang.empty()) name += source_lang + "-" + target_lang + ".";
  return (fs::path(destdir) / (name + lang)).string();
}

PreprocessSummary preprocess(const PreprocessOptions& options) { return Pipeline(options).run(); }

}  // namespace csan::data
