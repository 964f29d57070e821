#include "toolkit/foreign/marian_export.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/foreign/export_directory.h"
#include "toolkit/foreign/exported_model.h"
#include "toolkit/foreign/fairseq_mapping.h"
#include "toolkit/safetensors/writer.h"
#include "toolkit/text/dictionary.h"

namespace fs = std::filesystem;

namespace csan::foreign {

namespace {

using json = nlohmann::json;

// csan-import --marian's logits bias for a <s> the Marian model did not have.
constexpr double kImportedBosBias = -100.0;

void refuse_what_marian_lacks(const ExportedModel& m) {
  const auto& o = m.options;
  auto refuse = [&](const std::string& option, const std::string& why) {
    throw Error(m.path + ": " + option + ": MarianMT cannot express it (" + why +
                    "; export to fairseq instead, tools/interop/FORMATS.md section 7)",
                ErrorKind::bad_input);
  };
  if (o.learned_pos) refuse("model.learned_pos true", "MarianMT computes Marian's position table, never stores one");
  if (o.sinusoidal_layout != "marian")
    refuse("model.sinusoidal_layout " + o.sinusoidal_layout, "MarianMT has Marian's position table only");
  if (o.layer.normalize_before) refuse("model.normalize_before true", "MarianMT's layers are post-norm");
  if (o.layernorm_embedding) refuse("model.layernorm_embedding true", "MarianMT has no embedding layer norm");
  if (!o.share_all_embeddings)
    refuse("model.share_all_embeddings false", "csan-export writes one vocabulary shared and tied");
  if (o.decoder_start != "pad")
    refuse("model.decoder_start " + o.decoder_start, "MarianMT's decoder starts from <pad>");
  if (o.max_source_positions != o.max_target_positions)
    refuse("model.max_target_positions " + std::to_string(o.max_target_positions),
           "differs from model.max_source_positions; MarianMT has one max_position_embeddings");
  if (m.spm_model.empty())
    throw Error(m.path + ": no SentencePiece model in the checkpoint (MarianMT needs source.spm and target.spm)",
                ErrorKind::bad_input);
}

json config_json(const ExportedModel& m, int64_t vocab, int64_t pad) {
  const auto& o = m.options;
  const auto& l = o.layer;
  return {{"model_type", "marian"},
          {"architectures", {"MarianMTModel"}},
          {"vocab_size", vocab},
          {"decoder_vocab_size", vocab},
          {"d_model", l.embed_dim},
          {"encoder_layers", o.encoder_layers},
          {"decoder_layers", o.decoder_layers},
          {"num_hidden_layers", o.encoder_layers},
          {"encoder_attention_heads", l.heads},
          {"decoder_attention_heads", l.heads},
          {"encoder_ffn_dim", l.ffn_dim},
          {"decoder_ffn_dim", l.ffn_dim},
          {"max_position_embeddings", o.max_source_positions},
          {"activation_function", l.activation},
          {"dropout", l.dropout},
          {"attention_dropout", l.attention_dropout},
          {"activation_dropout", l.activation_dropout},
          {"encoder_layerdrop", 0.0},
          {"decoder_layerdrop", 0.0},
          {"scale_embedding", !o.no_scale_embedding},
          {"pad_token_id", pad},
          {"decoder_start_token_id", pad},
          {"eos_token_id", 0},
          {"forced_eos_token_id", 0},
          {"share_encoder_decoder_embeddings", true},
          {"tie_word_embeddings", true},
          {"static_position_embeddings", true},
          {"is_encoder_decoder", true},
          {"use_cache", true},
          {"torch_dtype", "float32"}};
}

void write_json(const fs::path& path, const json& value) { write_file_atomically(path.string(), value.dump(2) + "\n"); }

}  // namespace

void export_marian(const std::string& checkpoint, const std::string& out, bool replace) {
  check_export_directory(out, replace);
  const ExportedModel m = read_exported_model(checkpoint, "MarianMT");
  refuse_what_marian_lacks(m);
  const text::Dictionary dict = text::Dictionary::parse(m.src_dict, checkpoint + " (src_dict)");
  const torch::Tensor& shared = m.weights.at("encoder.embed_tokens.weight");
  const int64_t csan_vocab = shared.size(0);
  const torch::Tensor bias = m.options.final_logits_bias ? m.weights.at("decoder.final_logits_bias")
                                                         : torch::zeros({csan_vocab}, torch::kFloat);
  const bool bos_placeholder =
      bias[dict.bos()].item<double>() <= kImportedBosBias + 1 && shared[dict.bos()].eq(0).all().item<bool>();

  // Marian id -> csan id, and vocab.json.
  std::vector<int64_t> csan_of_marian = {dict.eos(), dict.unk()};
  if (!bos_placeholder) csan_of_marian.push_back(dict.bos());
  for (int64_t id = dict.nspecial(); id < csan_vocab; ++id) csan_of_marian.push_back(id);
  csan_of_marian.push_back(dict.pad());
  const auto vocab = static_cast<int64_t>(csan_of_marian.size());
  json pieces = json::object();
  for (int64_t id = 0; id < vocab; ++id) {
    const std::string& piece = dict.symbol(static_cast<int>(csan_of_marian[id]));
    if (pieces.contains(piece))
      throw Error(checkpoint + ": the dictionary holds '" + piece + "' twice (vocab.json needs each piece once)",
                  ErrorKind::bad_input);
    pieces[piece] = id;
  }
  const torch::Tensor index = torch::tensor(csan_of_marian, torch::kLong);

  // Weights under transformers' names: the shared matrix and the bias in Marian's order,
  // the layers under fairseq's names behind "model.".
  std::map<std::string, torch::Tensor> named;
  named["model.shared.weight"] = shared.index_select(0, index).contiguous();
  named["final_logits_bias"] = bias.index_select(0, index).reshape({1, vocab}).contiguous();
  std::map<std::string, torch::Tensor> layers = m.weights;
  layers.erase("encoder.embed_tokens.weight");
  layers.erase("decoder.final_logits_bias");
  for (const auto& [name, tensor] : csan_to_fairseq_names(layers, FairseqTying{}))
    named["model." + name] = tensor.contiguous();

  write_export_directory(out, replace, [&](const std::string& dir) {
    const fs::path d(dir);
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");  // transformers refuses a file without it
    for (const auto& [name, tensor] : named)
      writer.add(name, safetensors::Dtype::kF32, tensor.sizes().vec(), tensor.data_ptr());
    writer.write((d / "model.safetensors").string());
    write_json(d / "config.json", config_json(m, vocab, vocab - 1));
    write_json(d / "generation_config.json", {{"bad_words_ids", {{vocab - 1}}},
                                              {"decoder_start_token_id", vocab - 1},
                                              {"pad_token_id", vocab - 1},
                                              {"eos_token_id", 0},
                                              {"forced_eos_token_id", 0},
                                              {"num_beams", 5},
                                              {"max_length", 512}});
    write_json(d / "tokenizer_config.json", {{"tokenizer_class", "MarianTokenizer"},
                                             {"source_lang", m.src_lang},
                                             {"target_lang", m.tgt_lang},
                                             {"eos_token", "</s>"},
                                             {"unk_token", "<unk>"},
                                             {"pad_token", "<pad>"},
                                             {"separate_vocabs", false},
                                             {"model_max_length", 512},
                                             {"sp_model_kwargs", json::object()}});
    write_json(d / "special_tokens_map.json", {{"eos_token", "</s>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"}});
    write_json(d / "vocab.json", pieces);
    write_file_atomically((d / "source.spm").string(), m.spm_model);
    write_file_atomically((d / "target.spm").string(), m.tgt_spm_model.empty() ? m.spm_model : m.tgt_spm_model);
  });
}

}  // namespace csan::foreign
