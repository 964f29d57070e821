#include "toolkit/data/multilingual_preprocess.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/binarizer.h"
#include "toolkit/data/parallel_corpus.h"
#include "toolkit/data/preprocess_settings.h"
#include "toolkit/data/stage_progress.h"

namespace fs = std::filesystem;

namespace csan::data {

namespace {

using text::Dictionary;
using text::SentencePieceModel;

void validate(const MultilingualPreprocessOptions& m) {
  const PreprocessOptions& o = m.base;
  if (m.pairs.empty()) throw Error::for_key("lang-pairs", "is required (e.g. en-de,de-en)");
  if (o.destdir.empty()) throw Error::for_key("destdir", "is required");
  if (o.workers < 1) throw Error::for_key("workers", "must be at least 1");
  if (o.padding_factor < 1) throw Error::for_key("padding-factor", "must be at least 1");
  if (o.nwordssrc == 0 || o.nwordssrc < -1)
    throw Error::for_key("nwordssrc", "must be -1 (keep all) or a positive count, got " + std::to_string(o.nwordssrc));
  if (o.thresholdsrc < 0) throw Error::for_key("thresholdsrc", "must not be negative");
  if (o.spm.input_sentence_size < 0)
    throw Error::for_key("spm-input-sentence-size", "must not be negative (0: all sentences)");
  if (o.trainpref.empty() && (o.spm_model.empty() || o.srcdict.empty()))
    throw Error::for_key("trainpref", "is required unless --spm-model and --srcdict are given");
}

nlohmann::ordered_json settings(const MultilingualPreprocessOptions& m) {
  nlohmann::ordered_json s = settings_of(m.base);
  s["task"] = "multilingual_translation";
  s["lang_pairs"] = format_lang_pairs(m.pairs);
  return s;
}

// One corpus read from disk: the files PREFIX.A and PREFIX.B; pairs A-B and B-A share it.
struct Corpus {
  std::vector<std::string> langs;
  ParallelText text;
  std::vector<PieceCorpus> pieces;  // per language, train only
};

class MultilingualPipeline {
 public:
  explicit MultilingualPipeline(const MultilingualPreprocessOptions& m) : m_(m), o_(m.base), langs_(pair_languages(m.pairs)) {}

  PreprocessSummary run() {
    const auto start = std::chrono::steady_clock::now();
    validate(m_);
    summary_.removed_temporaries = remove_stale_temporaries(o_.destdir);
    const std::string rendered = render_settings(settings(m_));
    check_destination(o_.destdir, rendered);
    // Every file of every split before any work: a missing one names its pair at once.
    for (const auto& prefixes : {o_.trainpref, o_.validpref, o_.testpref})
      for (const auto& prefix : prefixes)
        for (const auto& pair : m_.pairs) pair_prefix(prefix, pair);
    AtomicDirectory out(o_.destdir);
    dir_ = out.staging();

    std::map<std::string, Corpus> train;  // by file prefix
    for (const auto& prefix : o_.trainpref)
      for (const auto& pair : m_.pairs) {
        const std::string files = pair_prefix(prefix, pair);
        if (!train.count(files)) train[files] = read_corpus(files, files_langs(files, pair), "train");
      }
    prepare_model(train);
    for (auto& [files, corpus] : train)
      for (size_t l = 0; l < corpus.langs.size(); ++l) {
        StageProgress progress("encode lines of " + files + "." + corpus.langs[l],
                               static_cast<long long>(corpus.text.size()), o_.progress);
        corpus.pieces.push_back(encode_corpus(*model_, corpus.text.lines[l], o_.workers, progress.counter()));
      }
    prepare_dictionary(train);
    if (!o_.trainpref.empty()) binarize_train(train);
    train.clear();
    binarize_extra_splits("valid", o_.validpref);
    binarize_extra_splits("test", o_.testpref);

    write_file_atomically((fs::path(dir_) / kSettingsFile).string(), rendered);
    out.commit();
    summary_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return summary_;
  }

 private:
  std::string staged(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // The languages of FILES (PREFIX.A-B): {A, B}, whichever direction `pair` is.
  static std::vector<std::string> files_langs(const std::string& files, const LangPair& pair) {
    const bool same = fs::path(files).extension().string() == "." + pair.name();
    return same ? std::vector<std::string>{pair.src, pair.tgt} : std::vector<std::string>{pair.tgt, pair.src};
  }

  Corpus read_corpus(const std::string& files, const std::vector<std::string>& langs, const std::string& split) {
    Corpus c;
    c.langs = langs;
    c.text = read_parallel_text({files}, langs);
    if (c.text.size() == 0)
      throw Error(files + "." + langs[0] + ", " + files + "." + langs[1] + ": the " + split + " split has no lines");
    if (split == "train") summary_.train_lines_read += static_cast<int64_t>(c.text.size());
    return c;
  }

  void prepare_model(const std::map<std::string, Corpus>& train) {
    if (!o_.spm_model.empty()) {
      model_ = std::make_shared<SentencePieceModel>(SentencePieceModel::load(o_.spm_model));
    } else {
      std::vector<const std::vector<std::string>*> corpora;
      for (const auto& [files, corpus] : train)
        for (const auto& lines : corpus.text.lines) corpora.push_back(&lines);
      model_ = std::make_shared<SentencePieceModel>(SentencePieceModel::train(corpora, o_.spm));
    }
    model_->save(staged("spm.model"));
  }

  // fairseq's build_dictionary over every side of every training corpus, then the language
  // tokens (count 0: they sort last, before the padding), as fairseq's augment_dictionary
  // appends them.
  void prepare_dictionary(const std::map<std::string, Corpus>& train) {
    if (!o_.srcdict.empty()) {
      dict_ = Dictionary::load(o_.srcdict);
      for (const auto& lang : langs_)
        if (!dict_.contains(lang_token(lang))) dict_.add_symbol(lang_token(lang), 0);
    } else {
      std::vector<const PieceCorpus*> corpora;
      for (const auto& [files, corpus] : train)
        for (const auto& pieces : corpus.pieces) corpora.push_back(&pieces);
      dict_ = build_dictionary(corpora, {}, o_.thresholdsrc, o_.nwordssrc, /*padding_factor=*/1);
      for (const auto& lang : langs_) dict_.add_symbol(lang_token(lang), 0);
      dict_.finalize(-1, -1, o_.padding_factor);
    }
    for (const auto& lang : langs_) {
      dict_.save(staged("dict." + lang + ".txt"));
      summary_.dictionary_sizes.emplace_back(lang, dict_.size());
    }
  }

  void write_split(const std::string& split, const LangPair& pair, const std::string& lang,
                   const BinarizedSplit& data) {
    write_dataset(dataset_prefix(dir_, split, pair.src, pair.tgt, lang), data, static_cast<size_t>(dict_.size()));
    summary_.splits.push_back(
        {split + " " + pair.name(), lang, static_cast<int64_t>(data.sizes.size()), data.tokens(), data.unknown});
  }

  void binarize_train(const std::map<std::string, Corpus>& train) {
    for (const auto& pair : m_.pairs) {
      const Corpus& corpus = train.at(pair_prefix(o_.trainpref.front(), pair));
      for (size_t l = 0; l < corpus.langs.size(); ++l) {
        // Several train prefixes are concatenated, in order.
        BinarizedSplit data;
        for (const auto& prefix : o_.trainpref) {
          const Corpus& part = train.at(pair_prefix(prefix, pair));
          const size_t side = part.langs[0] == corpus.langs[l] ? 0 : 1;
          data.append(binarize_corpus(dict_, part.pieces[side], {}, o_.workers));
        }
        write_split("train", pair, corpus.langs[l], data);
      }
    }
  }

  void binarize_extra_splits(const std::string& name, const std::vector<std::string>& prefixes) {
    for (size_t k = 0; k < prefixes.size(); ++k) {
      const std::string split = k == 0 ? name : name + std::to_string(k);
      for (const auto& pair : m_.pairs) {
        const std::string files = pair_prefix(prefixes[k], pair);
        const Corpus corpus = read_corpus(files, files_langs(files, pair), split);
        for (size_t l = 0; l < corpus.langs.size(); ++l) {
          StageProgress progress("encode+binarize lines of " + files + "." + corpus.langs[l],
                                 static_cast<long long>(corpus.text.size()), o_.progress);
          write_split(split, pair, corpus.langs[l],
                      encode_and_binarize(*model_, dict_, corpus.text.lines[l], o_.workers, progress.counter()));
        }
      }
    }
  }

  const MultilingualPreprocessOptions& m_;
  const PreprocessOptions& o_;
  std::vector<std::string> langs_;
  std::string dir_;
  std::shared_ptr<SentencePieceModel> model_;
  Dictionary dict_;
  PreprocessSummary summary_;
};

}  // namespace

std::string pair_prefix(const std::string& prefix, const LangPair& pair) {
  const std::string forward = prefix + "." + pair.name();
  const std::string reverse = prefix + "." + pair.tgt + "-" + pair.src;
  for (const auto& files : {forward, reverse})
    if (fs::exists(files + "." + pair.src) && fs::exists(files + "." + pair.tgt)) return files;
  const std::string missing =
      fs::exists(forward + "." + pair.src) ? forward + "." + pair.tgt : forward + "." + pair.src;
  throw Error(missing + ": no such file (pair " + pair.name() + " of --lang-pairs; nor " + reverse + ".{" + pair.src +
                  "," + pair.tgt + "})",
              ErrorKind::missing_file);
}

PreprocessSummary preprocess_multilingual(const MultilingualPreprocessOptions& options) {
  return MultilingualPipeline(options).run();
}

}  // namespace csan::data
