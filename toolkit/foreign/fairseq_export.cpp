#include "toolkit/foreign/fairseq_export.h"

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/foreign/export_directory.h"
#include "toolkit/foreign/exported_model.h"
#include "toolkit/foreign/fairseq_mapping.h"
#include "toolkit/foreign/torch_save_writer.h"

namespace fs = std::filesystem;

namespace csan::foreign {

namespace {

void refuse_what_fairseq_lacks(const ExportedModel& m) {
  const auto& o = m.options;
  auto refuse = [&](const std::string& option) {
    throw Error(m.path + ": " + option + ": fairseq's transformer cannot express it", ErrorKind::bad_input);
  };
  if (!o.learned_pos && o.sinusoidal_layout != "fairseq")
    refuse("model.sinusoidal_layout " + o.sinusoidal_layout + " (fairseq has its own sinusoidal table only)");
  if (o.final_logits_bias) refuse("model.final_logits_bias true (a bias on the output logits)");
  if (o.decoder_start != "eos")
    refuse("model.decoder_start " + o.decoder_start + " (fairseq's decoder starts from </s>)");
}

// cfg["model"]: FORMATS.md 6(a)'s keys plus what CTranslate2's converter reads (6(b)).
PicklePtr model_settings(const ExportedModel& m) {
  const auto& o = m.options;
  const auto& l = o.layer;
  const bool tied_output = o.share_all_embeddings || o.share_decoder_input_output_embed;
  std::vector<std::pair<std::string, PicklePtr>> a = {
      {"_name", pickle_string("transformer")},    {"arch", pickle_string("transformer")},
      {"task", pickle_string("translation")},     {"data", pickle_string(".")},
      {"source_lang", pickle_string(m.src_lang)}, {"target_lang", pickle_string(m.tgt_lang)}};
  for (const std::string side : {"encoder", "decoder"}) {
    a.emplace_back(side + "_embed_dim", pickle_int(l.embed_dim));
    a.emplace_back(side + "_ffn_embed_dim", pickle_int(l.ffn_dim));
    a.emplace_back(side + "_layers", pickle_int(side == "encoder" ? o.encoder_layers : o.decoder_layers));
    a.emplace_back(side + "_attention_heads", pickle_int(l.heads));
    a.emplace_back(side + "_normalize_before", pickle_bool(l.normalize_before));
    a.emplace_back(side + "_learned_pos", pickle_bool(o.learned_pos));
  }
  a.emplace_back("activation_fn", pickle_string(l.activation));
  a.emplace_back("dropout", pickle_float(l.dropout));
  a.emplace_back("attention_dropout", pickle_float(l.attention_dropout));
  a.emplace_back("activation_dropout", pickle_float(l.activation_dropout));
  a.emplace_back("share_decoder_input_output_embed", pickle_bool(tied_output));
  a.emplace_back("share_all_embeddings", pickle_bool(o.share_all_embeddings));
  a.emplace_back("no_scale_embedding", pickle_bool(o.no_scale_embedding));
  a.emplace_back("layernorm_embedding", pickle_bool(o.layernorm_embedding));
  a.emplace_back("no_token_positional_embeddings", pickle_bool(false));
  a.emplace_back("max_source_positions", pickle_int(o.max_source_positions));
  a.emplace_back("max_target_positions", pickle_int(o.max_target_positions));
  return pickle_namespace(std::move(a));
}

PicklePtr checkpoint_state(const ExportedModel& m) {
  const FairseqTying tying{m.options.share_all_embeddings, m.options.share_decoder_input_output_embed};
  std::vector<std::pair<std::string, PicklePtr>> weights;
  for (const auto& [name, tensor] : csan_to_fairseq_names(m.weights, tying))
    weights.emplace_back(name, pickle_tensor(tensor));
  // Without them fairseq takes the checkpoint for a pre-2018 one and drops pre-norm models'
  // final layer norms (FORMATS.md 6(a)).
  for (const char* version : {"encoder.version", "decoder.version"})
    weights.emplace_back(version, pickle_tensor(torch::tensor({3.0f})));
  return pickle_dict({
      {"args", pickle_none()},
      {"cfg", pickle_dict({{"model", model_settings(m)},
                           {"task", pickle_dict({{"_name", pickle_string("translation")},
                                                 {"data", pickle_string(".")},
                                                 {"source_lang", pickle_string(m.src_lang)},
                                                 {"target_lang", pickle_string(m.tgt_lang)}})}})},
      {"model", pickle_dict(std::move(weights))},
      {"optimizer_history", pickle_list({pickle_dict({{"lr_scheduler_state", pickle_dict({})}})})},
      {"extra_state", pickle_dict({})},
  });
}

}  // namespace

void export_fairseq(const std::string& checkpoint, const std::string& out, bool replace) {
  check_export_directory(out, replace);
  const ExportedModel m = read_exported_model(checkpoint, "fairseq");
  refuse_what_fairseq_lacks(m);
  if (m.src_lang == m.tgt_lang)
    throw Error(checkpoint + ": source and target language are both '" + m.src_lang +
                    "': fairseq's dict.<lang>.txt files need two names",
                ErrorKind::bad_input);
  const PicklePtr state = checkpoint_state(m);
  write_export_directory(out, replace, [&](const std::string& dir) {
    const fs::path d(dir);
    write_torch_save(*state, (d / "checkpoint.pt").string());
    // csan's dict.txt is fairseq's: the entries after the four specials, in id order.
    write_file_atomically((d / ("dict." + m.src_lang + ".txt")).string(), m.src_dict);
    write_file_atomically((d / ("dict." + m.tgt_lang + ".txt")).string(), m.tgt_dict);
    if (m.tgt_spm_model.empty() || m.tgt_spm_model == m.spm_model) {
      if (!m.spm_model.empty()) write_file_atomically((d / "spm.model").string(), m.spm_model);
    } else {
      write_file_atomically((d / ("spm." + m.src_lang + ".model")).string(), m.spm_model);
      write_file_atomically((d / ("spm." + m.tgt_lang + ".model")).string(), m.tgt_spm_model);
    }
  });
}

}  // namespace csan::foreign
