#include "toolkit/foreign/fairseq_mapping.h"

#include <array>
#include <regex>

#include "toolkit/core/error.h"

namespace csan::foreign {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

std::map<std::string, torch::Tensor> fairseq_to_csan_names(const PickleValue& model, const FairseqTying& tying,
                                                           const std::string& path,
                                                           std::map<std::string, std::string>& origin_names) {
  if (model.kind != PickleValue::Kind::dict)
    throw Error(path + ": model: is " + model.describe() + ", not a state dict", ErrorKind::bad_input);
  std::map<std::string, torch::Tensor> tensors;
  for (const auto& [key, value] : model.entries) {
    if (key->kind != PickleValue::Kind::string)
      throw Error(path + ": model: a key that is " + key->describe() + ", not a name", ErrorKind::bad_input);
    const std::string& name = key->text;
    if (value->kind != PickleValue::Kind::tensor)
      throw Error(path + ": model." + name + ": is " + value->describe() + ", not a tensor", ErrorKind::bad_input);
    tensors[name] = value->tensor;
  }
  return fairseq_to_csan_names(tensors, tying, path, origin_names);
}

std::map<std::string, torch::Tensor> fairseq_to_csan_names(const std::map<std::string, torch::Tensor>& model,
                                                           const FairseqTying& tying, const std::string& path,
                                                           std::map<std::string, std::string>& origin_names) {
  std::map<std::string, torch::Tensor> out;
  // "<prefix>.{q,k,v}_proj.<weight|bias>" gathered by "<prefix>.in_proj_<weight|bias>".
  std::map<std::string, std::array<torch::Tensor, 3>> qkv;
  static const std::regex projection(R"((.*)\.([qkv])_proj\.(weight|bias))");
  for (const auto& [name, tensor] : model) {
    if (ends_with(name, ".version") || ends_with(name, "._float_tensor")) continue;
    if (!tensor.is_floating_point())
      throw Error(path + ": model." + name + ": a " + std::string(c10::toString(tensor.scalar_type())) +
                      " tensor where weights are floating point",
                  ErrorKind::bad_input);
    std::smatch m;
    if (std::regex_match(name, m, projection)) {
      const int slot = m[2] == "q" ? 0 : m[2] == "k" ? 1 : 2;
      qkv[m[1].str() + ".in_proj_" + m[3].str()][slot] = tensor;
      continue;
    }
    if (name == "decoder.embed_tokens.weight" && tying.share_all_embeddings) continue;
    if (name == "decoder.output_projection.weight") {
      if (!tying.share_all_embeddings && !tying.share_decoder_input_output_embed)
        out["decoder.output_projection"] = tensor;
      origin_names["decoder.output_projection"] = "model." + name;
      continue;
    }
    const std::string csan_name = replace_once(replace_once(name, ".fc1.", ".ffn.fc1."), ".fc2.", ".ffn.fc2.");
    out[csan_name] = tensor;
    origin_names[csan_name] = "model." + name;
  }
  for (auto& [name, parts] : qkv) {
    for (int i = 0; i < 3; ++i)
      if (!parts[i].defined())
        throw Error(path + ": model." + replace_once(name, ".in_proj_", std::string(".") + "qkv"[i] + "_proj.") +
                        ": missing (q_proj, k_proj and v_proj come together)",
                    ErrorKind::bad_input);
    if (parts[0].sizes() != parts[1].sizes() || parts[0].sizes() != parts[2].sizes())
      throw Error(path + ": model." + replace_once(name, ".in_proj_", ".q_proj.") +
                      ": q, k and v projections of different shapes",
                  ErrorKind::bad_input);
    out[name] = torch::cat({parts[0], parts[1], parts[2]}, 0);
    origin_names[name] = "model." + replace_once(name, ".in_proj_", ".{q,k,v}_proj.");
  }
  return out;
}

std::map<std::string, torch::Tensor> csan_to_fairseq_names(const std::map<std::string, torch::Tensor>& csan,
                                                           const FairseqTying& tying) {
  std::map<std::string, torch::Tensor> out;
  static const std::regex fused(R"((.*)\.in_proj_(weight|bias))");
  for (const auto& [name, tensor] : csan) {
    std::smatch m;
    if (std::regex_match(name, m, fused)) {
      const auto parts = tensor.chunk(3, 0);
      for (int i = 0; i < 3; ++i) out[m[1].str() + "." + "qkv"[i] + "_proj." + m[2].str()] = parts[i];
      continue;
    }
    if (name == "decoder.output_projection") {
      out["decoder.output_projection.weight"] = tensor;
      continue;
    }
    out[replace_once(replace_once(name, ".ffn.fc1.", ".fc1."), ".ffn.fc2.", ".fc2.")] = tensor;
  }
  if (tying.share_all_embeddings) out["decoder.embed_tokens.weight"] = out.at("encoder.embed_tokens.weight");
  if (tying.share_all_embeddings || tying.share_decoder_input_output_embed)
    out["decoder.output_projection.weight"] = out.at("decoder.embed_tokens.weight");
  return out;
}

}  // namespace csan::foreign
