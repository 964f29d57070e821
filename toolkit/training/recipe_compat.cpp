#include "toolkit/training/recipe_compat.h"

#include <algorithm>
#include <cstdio>
#include <variant>

#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"

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

template <typename T, typename F>
std::string list_text(const std::vector<T>& v, F text) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + text(v[i]);
  return out + "]";
}

std::string text_of(const core::Config& cfg, const std::string& key) {
  return cfg.has(key) ? value_text(cfg.value(key)) : "(none)";
}

}  // namespace

std::string value_text(const core::Value& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return number_text(d); }
    std::string operator()(const std::string& s) const { return "'" + s + "'"; }
    std::string operator()(const std::vector<int64_t>& v) const {
      return list_text(v, [](int64_t i) { return std::to_string(i); });
    }
    std::string operator()(const std::vector<double>& v) const { return list_text(v, number_text); }
    std::string operator()(const std::vector<std::string>& v) const {
      return list_text(v, [](const std::string& s) { return s; });
    }
  };
  return std::visit(Visitor{}, value);
}

bool defines_model(const std::string& key) { return key.rfind("model.", 0) == 0; }

std::vector<RecipeChange> recipe_changes(const core::Config& saved, const core::Config& current) {
  std::vector<RecipeChange> changes;
  for (const auto& [key, spec] : current.schema().specs()) {
    const std::string before = text_of(saved, key), after = text_of(current, key);
    if (before != after) changes.push_back({key, before, after});
  }
  return changes;
}

std::string check_resume_compatible(const core::Config& current, const Task& task,
                                    const checkpoint::CheckpointMeta& saved, const std::string& checkpoint_path) {
  auto refuse = [&](const std::string& what, const std::string& saved_value, const std::string& current_value) {
    throw Error(what + " is " + current_value + " but " + saved_value + " in " + checkpoint_path +
                ", whose model cannot resume with it (use another --save-dir, or --restore-file)");
  };
  if (saved.task != task.name()) refuse("task.name", "'" + saved.task + "'", "'" + task.name() + "'");
  task.check_resume(saved, checkpoint_path);

  // Both recipes resolved the same way, so that a checkpoint written before a key
  // existed compares by the values its arch gives that key.
  core::Config saved_recipe =
      core::Config::from_yaml_string(saved.recipe_yaml, current.schema(), checkpoint_path + " (embedded recipe)");
  models::resolve_model_options(saved_recipe);
  const auto through_data = task.keys_checked_through_data();
  std::string allowed;
  for (const auto& change : recipe_changes(saved_recipe, current)) {
    if (std::find(through_data.begin(), through_data.end(), change.key) != through_data.end()) continue;
    if (change.key == "task.name") continue;  // compared above
    if (defines_model(change.key)) refuse(change.key, change.saved, change.current);
    allowed += (allowed.empty() ? "" : ", ") + change.key + " " + change.saved + " -> " + change.current;
  }
  return allowed;
}

}  // namespace csan::training
