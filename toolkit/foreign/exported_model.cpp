#include "toolkit/foreign/exported_model.h"

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/precision.h"
#include "toolkit/tasks/recipe.h"

namespace csan::foreign {

ExportedModel read_exported_model(const std::string& path, const std::string& target) {
  checkpoint::CheckpointReader reader(path);
  const std::string cannot = ": " + target + " cannot express ";
  // An int8 model is an approximation of the trained one and a bf16 one a rounding of it:
  // exporting either would hand the other library a model csan never trained.
  if (const auto precision = loading::inference_precision_of(reader))
    throw Error(path + ": an inference-only " + nn::precision_name(precision->precision) +
                    " checkpoint (convert-checkpoint): export the float32 checkpoint it was converted from",
                ErrorKind::bad_input);
  if (reader.meta().task != "translation")
    throw Error(path + ": task '" + reader.meta().task + "'" + cannot + "it (csan-export writes translation models)",
                ErrorKind::bad_input);
  loading::LoadedModel loaded = loading::load_model(reader, tasks::describe_model);
  const std::string arch = loaded.config.get<std::string>("model.arch");
  if (!dynamic_cast<models::TransformerModel*>(loaded.model.get()))
    throw Error(path + ": model.arch '" + arch + "'" + cannot +
                    "it (csan-export writes csan's Transformer: transformer, transformer_tiny, transformer_base, "
                    "transformer_big and their _prenorm presets)",
                ErrorKind::bad_input);
  for (const auto& role : models::transformer_attention_roles()) {
    const std::string key = "model.attention." + role;
    if (!loaded.config.has(key)) continue;
    std::string chain;
    for (const auto& entry : loaded.config.get<std::vector<std::string>>(key))
      chain += (chain.empty() ? "" : ", ") + entry;
    if (!chain.empty())
      throw Error(path + ": model.arch '" + arch + "' (" + key + ": " + chain + ")" + cannot +
                      "its attention entries (csan-export writes csan's plain Transformer)",
                  ErrorKind::bad_input);
  }
  ExportedModel m;
  m.path = path;
  m.options = models::TransformerOptions::from_config(loaded.config);
  const auto& meta = loaded.meta;
  m.src_lang = meta.get("src_lang");
  m.tgt_lang = meta.get("tgt_lang");
  m.src_dict = meta.get("src_dict");
  m.tgt_dict = meta.get("tgt_dict");
  m.spm_model = meta.get("spm_model");
  m.tgt_spm_model = meta.get("tgt_spm_model");
  torch::NoGradGuard no_grad;
  for (const auto& item : loaded.model->named_parameters())
    m.weights[item.key()] = item.value().detach().to(torch::kFloat).clone().contiguous();
  // Attention without biases (model.attn_bias false, the NVIDIA fork's setup) is attention
  // with zero biases, which fairseq and MarianMT always have.
  if (!m.options.layer.attention_bias) {
    std::map<std::string, torch::Tensor> zeros;
    for (const auto& [name, weight] : m.weights) {
      const auto stem = [&](const std::string& suffix) {
        return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0
                   ? name.substr(0, name.size() - suffix.size())
                   : std::string();
      };
      if (const std::string s = stem("in_proj_weight"); !s.empty())
        zeros[s + "in_proj_bias"] = torch::zeros({weight.size(0)});
      if (const std::string s = stem("out_proj.weight"); !s.empty())
        zeros[s + "out_proj.bias"] = torch::zeros({weight.size(0)});
    }
    for (auto& [name, bias] : zeros) m.weights.emplace(name, bias);
    m.options.layer.attention_bias = true;
  }
  return m;
}

}  // namespace csan::foreign
