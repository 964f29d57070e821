#include "toolkit/data/preprocess_settings.h"

#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/core/json_text.h"

namespace fs = std::filesystem;

namespace csan::data {

nlohmann::ordered_json settings_of(const PreprocessOptions& o) {
  if (!o.from_checkpoint.empty()) {
    PreprocessOptions recorded = o;
    recorded.spm_model = recorded.srcdict = recorded.tgtdict = "";
    recorded.from_checkpoint.clear();
    auto settings = settings_of(recorded);
    settings["from_checkpoint"] = o.from_checkpoint;
    return settings;
  }
  return {
      {"format", 1},
      {"source_lang", o.source_lang},
      {"target_lang", o.target_lang},
      {"only_source", o.only_source},
      {"trainpref", o.trainpref},
      {"validpref", o.validpref},
      {"testpref", o.testpref},
      {"spm_model", o.spm_model},
      {"spm_per_language", o.spm_per_language},
      {"spm_vocab_size", o.spm.vocab_size},
      {"spm_model_type", o.spm.model_type},
      {"spm_character_coverage", o.spm.character_coverage},
      {"spm_input_sentence_size", o.spm.input_sentence_size},
      {"spm_seed", o.spm.seed},
      {"joined_dictionary", o.joined_dictionary},
      {"srcdict", o.srcdict},
      {"tgtdict", o.tgtdict},
      {"thresholdsrc", o.thresholdsrc},
      {"thresholdtgt", o.thresholdtgt},
      {"nwordssrc", o.nwordssrc},
      {"nwordstgt", o.nwordstgt},
      {"padding_factor", o.padding_factor},
      {"min_len", o.filter.min_len},
      {"max_len", o.filter.max_len},
      {"max_len_ratio", o.filter.max_len_ratio},
  };
}

std::string render_settings(const nlohmann::ordered_json& settings) {
  return core::json_text(settings, /*items_on_lines=*/true) + "\n";
}

nlohmann::ordered_json read_settings(const std::string& dir) {
  const std::string path = (fs::path(dir) / kSettingsFile).string();
  if (!fs::exists(path)) throw Error(path + ": missing (not a directory written by csan-preprocess)");
  auto settings = core::read_json_file(path);
  if (!settings.is_object()) throw Error(path + ": not a settings record (a JSON object)");
  return settings;
}

void check_destination(const std::string& destdir, const std::string& rendered_settings) {
  std::error_code ec;
  if (!fs::exists(destdir, ec)) return;
  if (!fs::is_directory(destdir, ec)) throw Error(destdir + ": exists and is not a directory");
  const std::string record = (fs::path(destdir) / kSettingsFile).string();
  if (!fs::exists(record, ec)) {
    if (fs::is_empty(destdir, ec)) return;
    throw Error(destdir + ": exists, is not empty and has no " + kSettingsFile +
                " (not written by csan-preprocess); refusing to replace it");
  }
  nlohmann::ordered_json previous;
  try {
    previous = read_settings(destdir);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "; use another --destdir or remove it");
  }
  const auto current = core::parse_json(rendered_settings, "the new settings");
  auto value_in = [](const nlohmann::ordered_json& settings, const std::string& key) {
    const auto it = settings.find(key);
    return it == settings.end() ? std::string("(absent)") : core::json_text(*it);
  };
  auto refuse = [&](const std::string& key) {
    throw Error(destdir + ": was built with different settings (" + key + ": " + value_in(previous, key) + " there, " +
                value_in(current, key) + " now); use another --destdir or remove it");
  };
  for (const auto& [key, value] : current.items())
    if (!previous.contains(key) || previous[key] != value) refuse(key);
  for (const auto& [key, value] : previous.items())
    if (!current.contains(key)) refuse(key);
}

}  // namespace csan::data
