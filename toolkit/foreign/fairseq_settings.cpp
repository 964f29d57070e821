#include "toolkit/foreign/fairseq_settings.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/foreign/imported_checkpoint.h"

namespace csan::foreign {

namespace {

using Kind = PickleValue::Kind;

// The `transformer` model's archs that csan reads, with the sizes each sets when the
// checkpoint's settings leave them out (transformer_legacy.py: base_architecture,
// transformer_iwslt_de_en, transformer_wmt_en_de, transformer_vaswani_wmt_en_de_big,
// transformer_wmt_en_de_big, transformer_wmt_en_de_big_t2t).
struct ArchDefaults {
  int64_t embed_dim, ffn_dim, heads;
  double dropout;
  bool normalize_before;
  double attention_dropout, activation_dropout;
};
const std::map<std::string, ArchDefaults>& transformer_archs() {
  static const std::map<std::string, ArchDefaults> archs = {
      {"transformer", {512, 2048, 8, 0.1, false, 0.0, 0.0}},
      {"transformer_wmt_en_de", {512, 2048, 8, 0.1, false, 0.0, 0.0}},
      {"transformer_iwslt_de_en", {512, 1024, 4, 0.1, false, 0.0, 0.0}},
      {"transformer_vaswani_wmt_en_de_big", {1024, 4096, 16, 0.3, false, 0.0, 0.0}},
      {"transformer_wmt_en_de_big", {1024, 4096, 16, 0.3, false, 0.0, 0.0}},
      {"transformer_vaswani_wmt_en_fr_big", {1024, 4096, 16, 0.1, false, 0.0, 0.0}},
      {"transformer_wmt_en_de_big_t2t", {1024, 4096, 16, 0.3, true, 0.1, 0.1}},
  };
  return archs;
}

// fairseq models other than `transformer` that users commonly hold, to say what they are.
bool known_other_model(const std::string& arch) {
  for (const char* prefix : {"bart", "mbart", "lightconv", "fconv", "lstm", "transformer_lm", "transformer_align",
                             "multilingual_transformer", "hubert", "wav2vec", "roberta", "s2t", "lightconv_lm"})
    if (arch.rfind(prefix, 0) == 0) return true;
  return false;
}

class Settings {
 public:
  Settings(const PickleValue& holder, std::string where) : holder_(holder), where_(std::move(where)) {}

  const PickleValue* raw(const std::string& key) const {
    const PickleValue* v = holder_.find(key);
    return v && v->kind != Kind::none ? v : nullptr;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(where_ + "." + key + ": " + what, ErrorKind::bad_input);
  }
  std::optional<int64_t> integer(const std::string& key) const {
    const PickleValue* v = raw(key);
    if (!v) return std::nullopt;
    if (v->kind != Kind::integer) fail(key, "is " + v->describe() + ", not an int");
    return v->integer;
  }
  std::optional<double> number(const std::string& key) const {
    const PickleValue* v = raw(key);
    if (!v) return std::nullopt;
    if (v->kind == Kind::integer) return static_cast<double>(v->integer);
    if (v->kind != Kind::floating) fail(key, "is " + v->describe() + ", not a number");
    return v->floating;
  }
  bool flag(const std::string& key) const {
    const PickleValue* v = raw(key);
    if (!v) return false;
    if (v->kind != Kind::boolean) fail(key, "is " + v->describe() + ", not a bool");
    return v->boolean;
  }
  std::optional<std::string> text(const std::string& key) const {
    const PickleValue* v = raw(key);
    if (!v) return std::nullopt;
    if (v->kind != Kind::string) fail(key, "is " + v->describe() + ", not a string");
    return v->text;
  }
  const std::string& where() const { return where_; }

 private:
  const PickleValue& holder_;
  std::string where_;
};

}  // namespace

FairseqSettings read_fairseq_settings(const PickleValue& checkpoint, const std::string& path) {
  if (checkpoint.kind != Kind::dict)
    throw Error(path + ": not a fairseq checkpoint (data.pkl holds " + checkpoint.describe() + ", not a dict)",
                ErrorKind::bad_input);
  // cfg["model"] (fairseq >= 0.10, hydra configs) or args (older checkpoints).
  const PickleValue* holder = nullptr;
  std::string where;
  const PickleValue* cfg = checkpoint.find("cfg");
  if (cfg && cfg->kind != Kind::none) {
    if (!cfg->is_mapping()) throw Error(path + ": cfg is " + cfg->describe() + ", not a dict", ErrorKind::bad_input);
    holder = cfg->find("model");
    where = path + ": cfg.model";
  }
  if (!holder || holder->kind == Kind::none) {
    holder = checkpoint.find("args");
    where = path + ": args";
  }
  if (!holder || holder->kind == Kind::none)
    throw Error(path + ": neither cfg.model nor args holds the model's settings (not a fairseq checkpoint?)",
                ErrorKind::bad_input);
  if (!holder->is_mapping())
    throw Error(where + ": is " + holder->describe() + ", not a dict or argparse.Namespace", ErrorKind::bad_input);
  const Settings s(*holder, where);

  FairseqSettings out;
  out.arch = s.text("arch").value_or(s.text("_name").value_or(""));
  if (out.arch.empty()) s.fail("arch", "missing (neither arch nor _name is set)");
  const auto arch = transformer_archs().find(out.arch);
  if (arch == transformer_archs().end())
    s.fail("arch", "'" + out.arch + "' is " +
                       (known_other_model(out.arch) ? "not a model of fairseq's transformer family"
                                                    : "not one of the transformer archs csan imports") +
                       " (csan imports: transformer, transformer_iwslt_de_en, transformer_wmt_en_de, "
                       "transformer_vaswani_wmt_en_de_big, transformer_wmt_en_de_big(_t2t))");
  const ArchDefaults& d = arch->second;

  // The language pair: cfg.task for hydra checkpoints, args for older ones.
  const PickleValue* task = cfg && cfg->is_mapping() ? cfg->find("task") : nullptr;
  const Settings t(task && task->is_mapping() ? *task : *holder,
                   task && task->is_mapping() ? path + ": cfg.task" : where);
  out.source_lang = t.text("source_lang").value_or(s.text("source_lang").value_or(""));
  out.target_lang = t.text("target_lang").value_or(s.text("target_lang").value_or(""));

  // Refused: what csan's Transformer does not have.
  auto refuse_if = [&](bool condition, const std::string& key, const std::string& why) {
    if (condition) s.fail(key, why);
  };
  refuse_if(s.flag("adaptive_input"), "adaptive_input", "adaptive input embeddings are not supported");
  refuse_if(s.raw("adaptive_softmax_cutoff") != nullptr, "adaptive_softmax_cutoff",
            "adaptive softmax is not supported");
  refuse_if(s.flag("no_token_positional_embeddings"), "no_token_positional_embeddings",
            "a Transformer without positions is not supported");
  refuse_if(s.flag("cross_self_attention"), "cross_self_attention", "not supported");
  refuse_if(s.flag("no_cross_attention"), "no_cross_attention", "not supported");
  refuse_if(s.flag("no_decoder_final_norm"), "no_decoder_final_norm", "not supported");
  refuse_if(s.flag("merge_src_tgt_embed"), "merge_src_tgt_embed", "not supported");
  refuse_if(s.text("encoder_layers_to_keep").has_value(), "encoder_layers_to_keep", "pruned layers are not supported");
  refuse_if(s.text("decoder_layers_to_keep").has_value(), "decoder_layers_to_keep", "pruned layers are not supported");

  const int64_t embed = s.integer("encoder_embed_dim").value_or(d.embed_dim);
  const int64_t ffn = s.integer("encoder_ffn_embed_dim").value_or(d.ffn_dim);
  const int64_t heads = s.integer("encoder_attention_heads").value_or(d.heads);
  // csan's layers share one size, norm placement and position scheme on both sides.
  auto same = [&](const std::string& decoder_key, int64_t decoder, int64_t encoder, const std::string& encoder_key) {
    if (decoder != encoder)
      s.fail(decoder_key, std::to_string(decoder) + " differs from " + encoder_key + " " + std::to_string(encoder) +
                              " (csan's Transformer has one size for both sides)");
  };
  same("decoder_embed_dim", s.integer("decoder_embed_dim").value_or(embed), embed, "encoder_embed_dim");
  same("decoder_ffn_embed_dim", s.integer("decoder_ffn_embed_dim").value_or(ffn), ffn, "encoder_ffn_embed_dim");
  same("decoder_attention_heads", s.integer("decoder_attention_heads").value_or(heads), heads,
       "encoder_attention_heads");
  same("decoder_output_dim", s.integer("decoder_output_dim").value_or(embed), embed, "decoder_embed_dim");
  same("decoder_input_dim", s.integer("decoder_input_dim").value_or(embed), embed, "decoder_embed_dim");
  const bool encoder_pre = s.raw("encoder_normalize_before") ? s.flag("encoder_normalize_before") : d.normalize_before;
  const bool decoder_pre = s.raw("decoder_normalize_before") ? s.flag("decoder_normalize_before") : d.normalize_before;
  if (encoder_pre != decoder_pre)
    s.fail("decoder_normalize_before", "differs from encoder_normalize_before (csan normalizes both sides alike)");
  const bool learned = s.flag("encoder_learned_pos");
  if (s.flag("decoder_learned_pos") != learned)
    s.fail("decoder_learned_pos", "differs from encoder_learned_pos (csan has one position scheme)");
  const std::string activation = s.text("activation_fn").value_or("relu");
  // fairseq's swish is torch.nn.SiLU (utils.get_activation_fn), csan's too.
  if (activation != "relu" && activation != "gelu" && activation != "swish")
    s.fail("activation_fn", "'" + activation + "' is not supported (csan: relu, gelu, swish)");
  const bool share_all = s.flag("share_all_embeddings");

  auto& r = out.recipe;
  r["model.arch"] = "transformer";
  r["model.encoder_layers"] = std::to_string(s.integer("encoder_layers").value_or(6));
  r["model.decoder_layers"] = std::to_string(s.integer("decoder_layers").value_or(6));
  r["model.embed_dim"] = std::to_string(embed);
  r["model.ffn_dim"] = std::to_string(ffn);
  r["model.heads"] = std::to_string(heads);
  r["model.dropout"] = yaml_number(s.number("dropout").value_or(d.dropout));
  r["model.attention_dropout"] = yaml_number(s.number("attention_dropout").value_or(d.attention_dropout));
  r["model.activation_dropout"] = yaml_number(s.number("activation_dropout").value_or(d.activation_dropout));
  r["model.activation"] = activation;
  r["model.normalize_before"] = encoder_pre ? "true" : "false";
  r["model.attn_bias"] = "true";
  r["model.learned_pos"] = learned ? "true" : "false";
  r["model.no_scale_embedding"] = s.flag("no_scale_embedding") ? "true" : "false";
  r["model.share_all_embeddings"] = share_all ? "true" : "false";
  r["model.share_decoder_input_output_embed"] =
      share_all || s.flag("share_decoder_input_output_embed") ? "true" : "false";
  r["model.layernorm_embedding"] = s.flag("layernorm_embedding") ? "true" : "false";
  r["model.max_source_positions"] = std::to_string(s.integer("max_source_positions").value_or(1024));
  r["model.max_target_positions"] = std::to_string(s.integer("max_target_positions").value_or(1024));
  return out;
}

}  // namespace csan::foreign
