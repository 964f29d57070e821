#include "toolkit/training/recipe_compat.h"

#include <cstdio>
#include <variant>

#include "toolkit/core/error.h"

namespace csan::training {

namespace {

std::string number_text(double x) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

std::string value_text(const core::Value& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return number_text(d); }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<double>& v) const {
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + number_text(v[i]);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

std::string text_of(const core::Config& cfg, const std::string& key) {
  return cfg.has(key) ? value_text(cfg.value(key)) : "(none)";
}

// The language suffixes are compared as resolved (the recipe may leave them empty).
bool compared_through_meta(const std::string& key) {
  return key == "task.source_lang" || key == "task.target_lang";
}

}  // namespace

bool defines_model(const std::string& key) { return key.rfind("model.", 0) == 0; }

std::vector<RecipeChange> recipe_changes(const core::Config& saved, const core::Config& current) {
  std::vector<RecipeChange> changes;
  for (const auto& [key, spec] : current.schema().specs()) {
    const std::string before = text_of(saved, key), after = text_of(current, key);
    if (before != after) changes.push_back({key, before, after});
  }
  return changes;
}

std::string check_resume_compatible(const core::Config& current, const CheckpointMeta& current_meta,
                                    const CheckpointMeta& saved, const std::string& checkpoint_path,
                                    const std::string& data_dir) {
  auto refuse = [&](const std::string& what, const std::string& saved_value, const std::string& current_value) {
    throw Error(what + " is " + current_value + " but " + saved_value + " in " + checkpoint_path +
                ", whose model cannot resume with it (use another --save-dir, or --restore-file)");
  };
  if (saved.src_lang != current_meta.src_lang)
    refuse("task.source_lang", "'" + saved.src_lang + "'", "'" + current_meta.src_lang + "'");
  if (saved.tgt_lang != current_meta.tgt_lang)
    refuse("task.target_lang", "'" + saved.tgt_lang + "'", "'" + current_meta.tgt_lang + "'");
  auto same_file = [&](const std::string& saved_bytes, const std::string& current_bytes, const std::string& path) {
    if (saved_bytes != current_bytes)
      throw Error(path + ": differs from the one in " + checkpoint_path +
                  " (the checkpoint was trained on other data; resume with the same --data)");
  };
  same_file(saved.src_dict, current_meta.src_dict, data_dir + "/dict." + current_meta.src_lang + ".txt");
  same_file(saved.tgt_dict, current_meta.tgt_dict, data_dir + "/dict." + current_meta.tgt_lang + ".txt");
  same_file(saved.spm_model, current_meta.spm_model, data_dir + "/spm.model");

  const core::Config saved_recipe = core::Config::from_yaml_string(saved.recipe_yaml, current.schema(),
                                                                   checkpoint_path + " (embedded recipe)");
  std::string allowed;
  for (const auto& change : recipe_changes(saved_recipe, current)) {
    if (compared_through_meta(change.key)) continue;
    if (defines_model(change.key)) refuse(change.key, change.saved, change.current);
    allowed += (allowed.empty() ? "" : ", ") + change.key + " " + change.saved + " -> " + change.current;
  }
  return allowed;
}

}  // namespace csan::training
