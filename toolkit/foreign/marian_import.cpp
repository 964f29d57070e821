#include "toolkit/foreign/marian_import.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "toolkit/checkpoint/stored_tensor.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/foreign/fairseq_mapping.h"
#include "toolkit/foreign/imported_checkpoint.h"
#include "toolkit/foreign/marian_settings.h"
#include "toolkit/foreign/pickle_reader.h"
#include "toolkit/safetensors/reader.h"

namespace fs = std::filesystem;

namespace csan::foreign {

namespace {

using json = nlohmann::json;

constexpr double kAbsentTokenBias = -100.0;

std::string read_required(const fs::path& path, const std::string& what) {
  if (!fs::is_regular_file(path)) throw Error(path.string() + ": no such file (" + what + ")", ErrorKind::missing_file);
  return read_file(path.string());
}

// vocab.json in id order: pieces[id]. Throws for ids that are not 0..V-1 once each.
std::vector<std::string> read_vocabulary(const fs::path& path) {
  json vocab;
  try {
    vocab = json::parse(read_required(path, "the vocabulary"));
  } catch (const json::parse_error& e) {
    throw Error(path.string() + ": not JSON (" + e.what() + ")", ErrorKind::bad_input);
  }
  if (!vocab.is_object()) throw Error(path.string() + ": not a JSON object {piece: id}", ErrorKind::bad_input);
  std::vector<std::string> pieces(vocab.size());
  std::vector<bool> seen(vocab.size());
  for (const auto& [piece, id] : vocab.items()) {
    if (!id.is_number_integer())
      throw Error(path.string() + ": " + piece + ": the id is a " + id.type_name() + ", not an integer",
                  ErrorKind::bad_input);
    const auto i = id.get<int64_t>();
    if (i < 0 || i >= static_cast<int64_t>(pieces.size()) || seen[i])
      throw Error(path.string() + ": " + piece + ": id " + std::to_string(i) + " is not one of 0.." +
                      std::to_string(pieces.size() - 1) + " given once",
                  ErrorKind::bad_input);
    if (piece.find_first_of(" \t\n\r") != std::string::npos)
      throw Error(path.string() + ": piece with id " + std::to_string(i) + " contains white space",
                  ErrorKind::bad_input);
    seen[i] = true;
    pieces[i] = piece;
  }
  return pieces;
}

// The weights by Hugging Face name, from model.safetensors or else pytorch_model.bin.
std::map<std::string, torch::Tensor> read_weights(const fs::path& dir, std::string& origin) {
  const fs::path safetensors_file = dir / "model.safetensors";
  const fs::path pickle_file = dir / "pytorch_model.bin";
  std::map<std::string, torch::Tensor> weights;
  if (fs::is_regular_file(safetensors_file)) {
    origin = safetensors_file.string();
    // The weights are used where they lie in the file (copy-on-write: the importer may change
    // them, never the file): no second copy of the model in memory. Views a writer left
    // unaligned are copied.
    const safetensors::Reader reader(origin, safetensors::ChecksumPolicy::kVerifyIfPresent,
                                     core::MappedFile::Access::copy_on_write);
    for (const auto& view : reader.tensors())
      weights[view.name] = view.aligned() && checkpoint::torch_type(view.dtype)
                               ? checkpoint::in_place(view, reader.mapping(), origin)
                               : checkpoint::copy_of(view, origin);
    return weights;
  }
  if (!fs::is_regular_file(pickle_file))
    throw Error(dir.string() + ": neither model.safetensors nor pytorch_model.bin (the weights)",
                ErrorKind::missing_file);
  origin = pickle_file.string();
  const PicklePtr root = read_torch_save(origin);
  if (root->kind != PickleValue::Kind::dict)
    throw Error(origin + ": holds " + root->describe() + ", not a state dict", ErrorKind::bad_input);
  for (const auto& [key, value] : root->entries) {
    if (key->kind != PickleValue::Kind::string || value->kind != PickleValue::Kind::tensor)
      throw Error(origin + ": an entry " + key->describe() + " -> " + value->describe() + ", not name -> tensor",
                  ErrorKind::bad_input);
    weights[key->text] = value->tensor;
  }
  return weights;
}

const torch::Tensor& required(const std::map<std::string, torch::Tensor>& weights, const std::string& name,
                              const std::string& origin) {
  const auto it = weights.find(name);
  if (it == weights.end()) throw Error(origin + ": " + name + ": missing", ErrorKind::bad_input);
  return it->second;
}

}  // namespace

void import_marian(const MarianImportOptions& o, const std::string& output) {
  const fs::path dir(o.dir);
  if (!fs::is_directory(dir)) throw Error(o.dir + ": not a directory (a MarianMT model)", ErrorKind::missing_file);
  const fs::path config_path = dir / "config.json";
  const MarianSettings settings =
      read_marian_settings(read_required(config_path, "the model's settings"), config_path.string());
  const fs::path vocab_path = dir / "vocab.json";
  const std::vector<std::string> pieces = read_vocabulary(vocab_path);
  ImportedTranslationModel m;
  m.spm_model = read_required(dir / "source.spm", "the source SentencePiece model");
  m.tgt_spm_model = read_required(dir / "target.spm", "the target SentencePiece model");

  m.src_lang = o.source_lang, m.tgt_lang = o.target_lang;
  if (fs::is_regular_file(dir / "tokenizer_config.json")) {
    const json tokenizer = json::parse(read_file((dir / "tokenizer_config.json").string()), nullptr, false);
    auto language = [&](const char* key, std::string& lang) {
      if (lang.empty() && tokenizer.is_object() && tokenizer.contains(key) && tokenizer[key].is_string())
        lang = tokenizer[key].get<std::string>();
    };
    language("source_lang", m.src_lang);
    language("target_lang", m.tgt_lang);
  }
  if (m.src_lang.empty()) m.src_lang = "src";
  if (m.tgt_lang.empty()) m.tgt_lang = "tgt";

  // Marian id -> csan id: the specials by name, the other pieces in order after csan's four.
  const auto vocab = static_cast<int64_t>(pieces.size());
  auto special = [&](const std::string& piece, int64_t config_id, const std::string& config_key) {
    const auto it = std::find(pieces.begin(), pieces.end(), piece);
    if (it == pieces.end()) throw Error(vocab_path.string() + ": " + piece + ": missing", ErrorKind::bad_input);
    const int64_t id = it - pieces.begin();
    if (config_id >= 0 && id != config_id)
      throw Error(config_path.string() + ": " + config_key + ": " + std::to_string(config_id) + ", but " +
                      vocab_path.string() + " gives " + piece + " id " + std::to_string(id),
                  ErrorKind::bad_input);
    return id;
  };
  const int64_t pad = special("<pad>", settings.pad_id, "pad_token_id");
  const int64_t eos = special("</s>", settings.eos_id, "eos_token_id");
  const int64_t unk = special("<unk>", -1, "");
  const auto bos_it = std::find(pieces.begin(), pieces.end(), "<s>");
  const int64_t bos = bos_it == pieces.end() ? -1 : bos_it - pieces.begin();
  std::vector<int64_t> marian_of_csan = {bos, pad, eos, unk};
  std::string dict;
  for (int64_t id = 0; id < vocab; ++id) {
    if (id == pad || id == eos || id == unk || id == bos) continue;
    marian_of_csan.push_back(id);
    dict += pieces[id] + " 0\n";
  }
  m.src_dict = m.tgt_dict = dict;
  m.src_dict_path = m.tgt_dict_path = vocab_path.string();

  std::string origin;
  std::map<std::string, torch::Tensor> weights = read_weights(dir, origin);
  m.origin = origin;
  const torch::Tensor shared = required(weights, "model.shared.weight", origin);
  const torch::Tensor bias = required(weights, "final_logits_bias", origin);
  if (shared.dim() != 2 || shared.size(0) != vocab)
    throw Error(origin + ": model.shared.weight: " + std::to_string(shared.dim() == 2 ? shared.size(0) : -1) +
                    " rows, but " + vocab_path.string() + " has " + std::to_string(vocab) + " pieces",
                ErrorKind::bad_input);
  if (settings.vocab_size != vocab)
    throw Error(config_path.string() + ": vocab_size: " + std::to_string(settings.vocab_size) + ", but " +
                    vocab_path.string() + " has " + std::to_string(vocab) + " pieces",
                ErrorKind::bad_input);
  if (bias.numel() != vocab)
    throw Error(origin + ": final_logits_bias: " + std::to_string(bias.numel()) + " values for " +
                    std::to_string(vocab) + " pieces",
                ErrorKind::bad_input);

  // Rows in csan's order. csan's <s> (when Marian has none) gets a zero row and a bias of
  // kAbsentTokenBias: e^-100 of the others' probability vanishes in float32, so the log-probs of
  // Marian's tokens are unchanged, while a label-smoothed loss (which sums every log-prob) stays
  // finite when the model is fine-tuned, as it would not with -inf.
  const torch::Tensor index = torch::tensor(marian_of_csan, torch::kLong);
  const torch::Tensor known = index.ge(0);
  const torch::Tensor from = index.clamp_min(0);
  const torch::Tensor embedding = shared.to(torch::kFloat).index_select(0, from) * known.unsqueeze(1).to(torch::kFloat);
  const torch::Tensor logits_bias =
      bias.reshape({-1}).to(torch::kFloat).index_select(0, from).masked_fill(known.logical_not(), kAbsentTokenBias);

  // The rest by fairseq's names: Marian's are fairseq's under "model.".
  std::map<std::string, torch::Tensor> layers;
  for (const auto& [name, tensor] : weights) {
    if (name == "model.shared.weight" || name == "final_logits_bias") continue;
    // Tied copies of the shared matrix, and the position tables transformers computes.
    if (name == "model.encoder.embed_tokens.weight" || name == "model.decoder.embed_tokens.weight" ||
        name == "lm_head.weight" || name == "model.encoder.embed_positions.weight" ||
        name == "model.decoder.embed_positions.weight")
      continue;
    if (name.rfind("model.", 0) != 0)
      throw Error(origin + ": " + name + ": not a MarianMTModel weight", ErrorKind::bad_input);
    layers[name.substr(6)] = tensor;
  }
  m.weights = fairseq_to_csan_names(layers, FairseqTying{true, true}, origin, m.origin_names);
  m.weights["encoder.embed_tokens.weight"] = embedding;
  m.origin_names["encoder.embed_tokens.weight"] = "model.shared.weight";
  m.weights["decoder.final_logits_bias"] = logits_bias;
  m.origin_names["decoder.final_logits_bias"] = "final_logits_bias";
  m.recipe = settings.recipe;
  m.detokenizer = "marian";
  write_imported_checkpoint(m, output);
}

}  // namespace csan::foreign
