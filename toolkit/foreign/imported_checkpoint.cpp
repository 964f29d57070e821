#include "toolkit/foreign/imported_checkpoint.h"

#include <set>
#include <sstream>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/translation_task.h"
#include "toolkit/text/dictionary.h"

namespace csan::foreign {

namespace {

// The recipe as YAML: the task's keys, then each "section.key" under its section.
std::string recipe_yaml(const ImportedTranslationModel& m) {
  std::map<std::string, std::map<std::string, std::string>> sections;
  sections["task"]["name"] = "translation";
  sections["task"]["data"] = "''";
  sections["task"]["source_lang"] = m.src_lang;
  sections["task"]["target_lang"] = m.tgt_lang;
  for (const auto& [key, value] : m.recipe) {
    const size_t dot = key.find('.');
    sections[key.substr(0, dot)][key.substr(dot + 1)] = value;
  }
  std::ostringstream yaml;
  for (const auto& [section, values] : sections) {
    yaml << section << ":\n";
    for (const auto& [key, value] : values) yaml << "  " << key << ": " << value << "\n";
  }
  return yaml.str();
}

std::string shape(const torch::Tensor& t) {
  std::ostringstream out;
  out << t.sizes();
  return out.str();
}

}  // namespace

std::string yaml_number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  std::string s = out.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

void write_imported_checkpoint(const ImportedTranslationModel& m, const std::string& output) {
  const text::Dictionary src_dict = text::Dictionary::parse(m.src_dict, m.src_dict_path);
  const text::Dictionary tgt_dict = text::Dictionary::parse(m.tgt_dict, m.tgt_dict_path);
  core::Config cfg =
      core::Config::from_yaml_string(recipe_yaml(m), tasks::recipe_schema(), m.origin + " (derived recipe)");
  tasks::resolve_recipe(cfg);
  if (cfg.get<bool>("model.share_all_embeddings") && !(src_dict == tgt_dict))
    throw Error(m.src_dict_path + ": differs from " + m.tgt_dict_path + ", but " + m.origin +
                    " shares all embeddings (share_all_embeddings needs one joined dictionary)",
                ErrorKind::bad_input);
  // The embedding tables must match the dictionaries before anything else is compared.
  auto rows = [&](const std::string& name, const text::Dictionary& dict, const std::string& dict_path) {
    const auto it = m.weights.find(name);
    if (it == m.weights.end() || it->second.dim() != 2) return;
    if (it->second.size(0) != dict.size())
      throw Error(m.origin + ": " + m.origin_names.at(name) + " has " + std::to_string(it->second.size(0)) +
                      " rows but " + dict_path + " gives " + std::to_string(dict.size()) +
                      " entries (with the 4 specials): not the model's dictionary",
                  ErrorKind::bad_input);
  };
  rows("encoder.embed_tokens.weight", src_dict, m.src_dict_path);
  rows("decoder.embed_tokens.weight", tgt_dict, m.tgt_dict_path);
  rows("decoder.output_projection", tgt_dict, m.tgt_dict_path);

  // Every parameter is overwritten below (one missing is an error): drawing random values for
  // them first was a tenth of a transformer_big import (tools/bench/import-time.sh).
  std::shared_ptr<models::Model> model = [&] {
    nn::SkipInitialization skip;
    return models::build_model(cfg, tasks::translation_context(src_dict, tgt_dict));
  }();
  std::set<std::string> used;
  {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters()) {
      const std::string& name = item.key();
      torch::Tensor& parameter = item.value();
      const auto it = m.weights.find(name);
      if (it == m.weights.end())
        throw Error(m.origin + ": the model has no parameter for csan's " + name + " (" +
                        std::to_string(parameter.numel()) + " values; settings and weights disagree)",
                    ErrorKind::bad_input);
      if (it->second.sizes() != parameter.sizes())
        throw Error(m.origin + ": " + m.origin_names.at(name) + " has shape " + shape(it->second) +
                        ", the settings give " + shape(parameter),
                    ErrorKind::bad_input);
      // Taken over where it can be (same type, dense): the memory read from the file becomes
      // the parameter, instead of a second copy of the whole model (the parameters were
      // never initialized, so never touched).
      if (it->second.scalar_type() == parameter.scalar_type() && it->second.is_contiguous())
        parameter.set_data(it->second);
      else
        parameter.copy_(it->second);
      used.insert(name);
    }
  }
  for (const auto& [name, tensor] : m.weights)
    if (!used.count(name))
      throw Error(m.origin + ": " + m.origin_names.at(name) + " has no place in the model its settings describe",
                  ErrorKind::bad_input);

  checkpoint::CheckpointMeta meta;
  meta.task = "translation";
  meta.recipe_yaml = cfg.to_yaml();
  meta.data = {{"src_lang", m.src_lang},
               {"tgt_lang", m.tgt_lang},
               {"src_dict", m.src_dict},
               {"tgt_dict", m.tgt_dict},
               {"spm_model", m.spm_model}};
  if (!m.tgt_spm_model.empty() && m.tgt_spm_model != m.spm_model) meta.data["tgt_spm_model"] = m.tgt_spm_model;
  if (!m.detokenizer.empty()) meta.data["detokenizer"] = m.detokenizer;
  checkpoint::CheckpointWriter writer;
  writer.set_meta(meta);
  writer.set_model(*model);
  // Fine-tuning resumes from the checkpoint (csan-train --restore-file), which restores the
  // random state: a seeded one makes the import reproducible byte for byte.
  torch::manual_seed(1);
  writer.capture_rng_state();
  writer.write(output);
}

}  // namespace csan::foreign
