#include "toolkit/data/preprocess_settings.h"

#include <cstdio>
#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/progress.h"

namespace fs = std::filesystem;

namespace csan::data {

namespace {

std::string quoted(const std::string& s) { return "\"" + json_escape(s) + "\""; }

std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

std::string boolean(bool b) { return b ? "true" : "false"; }

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_settings(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t open = line.find('"'), sep = line.find("\": ");
    if (open == std::string::npos || sep == std::string::npos || sep < open) continue;
    std::string value = line.substr(sep + 3);
    if (!value.empty() && value.back() == ',') value.pop_back();
    out.emplace_back(line.substr(open + 1, sep - open - 1), value);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> settings_of(const PreprocessOptions& o) {
  return {
      {"format", "1"},
      {"source_lang", quoted(o.source_lang)},
      {"target_lang", quoted(o.target_lang)},
      {"only_source", boolean(o.only_source)},
      {"trainpref", list(o.trainpref)},
      {"validpref", list(o.validpref)},
      {"testpref", list(o.testpref)},
      {"spm_model", quoted(o.spm_model)},
      {"spm_per_language", boolean(o.spm_per_language)},
      {"spm_vocab_size", std::to_string(o.spm.vocab_size)},
      {"spm_model_type", quoted(o.spm.model_type)},
      {"spm_character_coverage", number(o.spm.character_coverage)},
      {"spm_input_sentence_size", std::to_string(o.spm.input_sentence_size)},
      {"spm_seed", std::to_string(o.spm.seed)},
      {"joined_dictionary", boolean(o.joined_dictionary)},
      {"srcdict", quoted(o.srcdict)},
      {"tgtdict", quoted(o.tgtdict)},
      {"thresholdsrc", std::to_string(o.thresholdsrc)},
      {"thresholdtgt", std::to_string(o.thresholdtgt)},
      {"nwordssrc", std::to_string(o.nwordssrc)},
      {"nwordstgt", std::to_string(o.nwordstgt)},
      {"padding_factor", std::to_string(o.padding_factor)},
      {"min_len", std::to_string(o.filter.min_len)},
      {"max_len", std::to_string(o.filter.max_len)},
      {"max_len_ratio", number(o.filter.max_len_ratio)},
  };
}

std::string render_settings(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string out = "{\n";
  for (size_t i = 0; i < settings.size(); ++i) {
    out += "  " + quoted(settings[i].first) + ": " + settings[i].second;
    out += i + 1 < settings.size() ? ",\n" : "\n";
  }
  return out + "}\n";
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
  const std::string previous = read_file(record);
  if (previous == rendered_settings) return;
  auto old_values = parse_settings(previous);
  for (const auto& [key, value] : parse_settings(rendered_settings)) {
    std::string old_value = "(absent)";
    for (const auto& [old_key, v] : old_values)
      if (old_key == key) old_value = v;
    if (old_value != value)
      throw Error(destdir + ": was built with different settings (" + key + ": " + old_value +
                  " there, " + value + " now); use another --destdir or remove it");
  }
  throw Error(record + ": unreadable settings record; use another --destdir or remove it");
}

}  // namespace csan::data
