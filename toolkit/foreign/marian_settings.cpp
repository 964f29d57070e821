#include "toolkit/foreign/marian_settings.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "toolkit/core/error.h"
#include "toolkit/foreign/imported_checkpoint.h"

namespace csan::foreign {

namespace {

using json = nlohmann::json;

// config.json's fields, each read with its type checked; a missing field takes MarianConfig's
// default (configuration_marian.py MarianConfig.__init__).
class ConfigFields {
 public:
  ConfigFields(const json& root, std::string path) : root_(root), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(path_ + ": " + key + ": " + what, ErrorKind::bad_input);
  }
  int64_t integer(const std::string& key, int64_t fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number_integer()) fail(key, "is " + describe(*v) + ", not an integer");
    return v->get<int64_t>();
  }
  double number(const std::string& key, double fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number()) fail(key, "is " + describe(*v) + ", not a number");
    return v->get<double>();
  }
  bool flag(const std::string& key, bool fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, "is " + describe(*v) + ", not true or false");
    return v->get<bool>();
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) fail(key, "is " + describe(*v) + ", not a string");
    return v->get<std::string>();
  }

 private:
  const json* find(const std::string& key) const {
    const auto it = root_.find(key);
    return it == root_.end() || it->is_null() ? nullptr : &*it;
  }
  static std::string describe(const json& v) {
    std::string shown = v.dump();
    if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
    return std::string("a ") + v.type_name() + " (" + shown + ")";
  }

  const json& root_;
  std::string path_;
};

}  // namespace

MarianSettings read_marian_settings(const std::string& json_text, const std::string& path) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw Error(path + ": not JSON (" + e.what() + ")", ErrorKind::bad_input);
  }
  if (!root.is_object()) throw Error(path + ": not a JSON object", ErrorKind::bad_input);
  const ConfigFields c(root, path);
  const std::string model_type = c.text("model_type", "");
  if (model_type != "marian")
    c.fail("model_type", "'" + model_type + "' is not marian (csan-import --marian reads MarianMT models)");

  MarianSettings out;
  out.vocab_size = c.integer("vocab_size", 58101);
  out.pad_id = c.integer("pad_token_id", 58100);
  out.eos_id = c.integer("eos_token_id", 0);
  if (c.integer("decoder_start_token_id", 58100) != out.pad_id)
    c.fail("decoder_start_token_id", "differs from pad_token_id (csan's decoder starts from </s> or <pad>)");
  if (!c.flag("share_encoder_decoder_embeddings", true))
    c.fail("share_encoder_decoder_embeddings", "false (separate vocabularies) is not supported");
  if (!c.flag("tie_word_embeddings", true)) c.fail("tie_word_embeddings", "false is not supported");
  if (c.integer("decoder_vocab_size", out.vocab_size) != out.vocab_size)
    c.fail("decoder_vocab_size", "differs from vocab_size (csan reads one shared vocabulary)");

  const int64_t embed = c.integer("d_model", 1024);
  const int64_t ffn = c.integer("encoder_ffn_dim", 4096);
  const int64_t heads = c.integer("encoder_attention_heads", 16);
  auto same = [&](const std::string& decoder_key, int64_t value, const std::string& encoder_key, int64_t encoder) {
    if (value != encoder)
      c.fail(decoder_key, std::to_string(value) + " differs from " + encoder_key + " " + std::to_string(encoder) +
                              " (csan's Transformer has one size for both sides)");
  };
  same("decoder_ffn_dim", c.integer("decoder_ffn_dim", 4096), "encoder_ffn_dim", ffn);
  same("decoder_attention_heads", c.integer("decoder_attention_heads", 16), "encoder_attention_heads", heads);
  std::string activation = c.text("activation_function", "gelu");
  if (activation == "silu") activation = "swish";
  if (activation != "swish" && activation != "relu" && activation != "gelu")
    c.fail("activation_function", "'" + activation + "' is not supported (csan: swish/silu, relu, gelu)");
  const int64_t positions = c.integer("max_position_embeddings", 1024);

  auto& r = out.recipe;
  r["model.arch"] = "transformer";
  r["model.encoder_layers"] = std::to_string(c.integer("encoder_layers", 12));
  r["model.decoder_layers"] = std::to_string(c.integer("decoder_layers", 12));
  r["model.embed_dim"] = std::to_string(embed);
  r["model.ffn_dim"] = std::to_string(ffn);
  r["model.heads"] = std::to_string(heads);
  r["model.dropout"] = yaml_number(c.number("dropout", 0.1));
  r["model.attention_dropout"] = yaml_number(c.number("attention_dropout", 0.0));
  r["model.activation_dropout"] = yaml_number(c.number("activation_dropout", 0.0));
  r["model.activation"] = activation;
  r["model.normalize_before"] = "false";
  r["model.attn_bias"] = "true";
  r["model.learned_pos"] = "false";
  r["model.sinusoidal_layout"] = "marian";
  r["model.no_scale_embedding"] = c.flag("scale_embedding", false) ? "false" : "true";
  r["model.share_all_embeddings"] = "true";
  r["model.share_decoder_input_output_embed"] = "true";
  r["model.layernorm_embedding"] = "false";
  r["model.final_logits_bias"] = "true";
  r["model.decoder_start"] = "pad";
  r["model.max_source_positions"] = std::to_string(positions);
  r["model.max_target_positions"] = std::to_string(positions);
  return out;
}

}  // namespace csan::foreign
