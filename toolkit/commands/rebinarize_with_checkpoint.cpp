#include "toolkit/commands/rebinarize_with_checkpoint.h"

#include <filesystem>

#include "toolkit/commands/checkpoint_vocabulary.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/data/preprocess_settings.h"

namespace fs = std::filesystem;

namespace csan::commands {

namespace {

std::string file_or_empty(const std::string& path) { return fs::exists(path) ? read_file(path) : std::string(); }

bool holds_vocabulary(const std::string& dir, const CheckpointVocabulary& v) {
  return file_or_empty(dir + "/dict." + v.src_lang + ".txt") == v.src_dict &&
         file_or_empty(dir + "/dict." + v.tgt_lang + ".txt") == v.tgt_dict &&
         file_or_empty(dir + "/spm.model") == v.spm_model;
}

// The options csan-preprocess --from-checkpoint takes to binarize what `data_dir` was
// binarized from: its languages, raw prefixes and length filter, as preprocess.json records.
data::PreprocessOptions recorded_options(const std::string& data_dir) {
  const std::string record_path = data_dir + "/" + data::kSettingsFile;
  nlohmann::ordered_json record;
  try {
    record = data::read_settings(data_dir);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "; --reuse-dictionaries re-binarizes the raw text it records",
                ErrorKind::missing_file);
  }
  data::PreprocessOptions o;
  try {
    o.source_lang = record.at("source_lang").get<std::string>();
    o.target_lang = record.at("target_lang").get<std::string>();
    o.trainpref = record.at("trainpref").get<std::vector<std::string>>();
    o.validpref = record.at("validpref").get<std::vector<std::string>>();
    o.testpref = record.at("testpref").get<std::vector<std::string>>();
    o.filter.min_len = record.at("min_len").get<int64_t>();
    o.filter.max_len = record.at("max_len").get<int64_t>();
    o.filter.max_len_ratio = record.at("max_len_ratio").get<double>();
  } catch (const nlohmann::json::exception&) {
    throw Error(record_path + ": not a record of translation data (languages, prefixes, length filter)",
                ErrorKind::bad_input);
  }
  if (o.trainpref.empty())
    throw Error(record_path + ": records no raw training text (trainpref) to re-binarize with --reuse-dictionaries",
                ErrorKind::bad_input);
  return o;
}

// `destdir` holds what `settings` would write: the same record, and the vocabulary `v`.
// The record's from_checkpoint may name another file with that vocabulary (a resumed
// fine-tuning run takes it from its own checkpoint_last.pt).
bool same_data(const std::string& destdir, const std::string& settings, const CheckpointVocabulary& v) {
  const std::string record = file_or_empty(destdir + "/" + data::kSettingsFile);
  if (record.empty() || !holds_vocabulary(destdir, v)) return false;
  auto without_checkpoint = [](const std::string& text) {
    auto json = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) json.erase("from_checkpoint");
    return json;
  };
  const auto existing = without_checkpoint(record);
  return !existing.is_discarded() && existing == without_checkpoint(settings);
}

void check_raw_files(const data::PreprocessOptions& o, const std::string& record_path) {
  const std::pair<const char*, const std::vector<std::string>*> prefixes[] = {
      {"trainpref", &o.trainpref}, {"validpref", &o.validpref}, {"testpref", &o.testpref}};
  for (const auto& [option, list] : prefixes)
    for (const auto& prefix : *list)
      for (const auto& lang : {o.source_lang, o.target_lang})
        if (!fs::exists(prefix + "." + lang))
          throw Error(prefix + "." + lang + ": no such file (raw text of the " + option + " recorded in " +
                          record_path + ", which --reuse-dictionaries re-binarizes)",
                      ErrorKind::missing_file);
}

}  // namespace

RebinarizedData rebinarize_with_checkpoint(const std::string& data_dir, const std::string& checkpoint,
                                           const std::string& destdir, int workers) {
  const CheckpointVocabulary v = read_checkpoint_vocabulary(checkpoint);
  if (holds_vocabulary(data_dir, v))
    return {data_dir, data_dir + " has the SentencePiece model and dictionaries of " + checkpoint +
                          " already: --reuse-dictionaries trains on it as it is"};
  data::PreprocessOptions o = recorded_options(data_dir);
  o.destdir = destdir;
  o.workers = workers;
  o.from_checkpoint = checkpoint;
  const std::string record_path = data_dir + "/" + data::kSettingsFile;
  if (o.source_lang != v.src_lang || o.target_lang != v.tgt_lang)
    throw Error(record_path + ": the data translates " + o.source_lang + " -> " + o.target_lang + " but " + checkpoint +
                    " " + v.src_lang + " -> " + v.tgt_lang,
                ErrorKind::bad_input);
  CheckpointVocabularyFiles vocabulary(o, v);
  const std::string settings = data::render_settings(data::settings_of(o));
  const std::string what = data_dir + "'s raw text binarized with the SentencePiece model and dictionaries of " +
                           checkpoint + " (--reuse-dictionaries)";
  if (fs::exists(destdir)) {
    if (same_data(destdir, settings, v)) return {destdir, "reusing " + destdir + ": " + what};
    throw Error(destdir + ": holds other data than " + what + "; remove it, or fine-tune into another --save-dir");
  }
  check_raw_files(o, record_path);
  const auto summary = data::preprocess(o);
  return {destdir, "wrote " + destdir + ": " + what + " in " + std::to_string(summary.seconds).substr(0, 4) + " s"};
}

}  // namespace csan::commands
