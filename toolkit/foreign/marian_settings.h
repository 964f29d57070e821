// The settings of a Hugging Face MarianMT model (its config.json, MarianConfig) as the recipe
// keys of csan's Transformer: Marian's position table, swish, scaled embeddings, the final
// logits bias and a decoder that starts from <pad> (tools/interop/FORMATS.md section 4).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace csan::foreign {

struct MarianSettings {
  // csan recipe keys ("model.embed_dim", ...) with their values as YAML scalars.
  std::map<std::string, std::string> recipe;
  int64_t vocab_size = 0;
  int64_t pad_id = 0, eos_id = 0;  // Marian's ids (config.json pad_token_id, eos_token_id)
};

// `json_text` is config.json's contents, `path` its name for errors. Throws csan::Error
// "PATH: FIELD: ..." for a model_type other than marian, a value of the wrong type, and every
// setting csan's Transformer cannot express.
MarianSettings read_marian_settings(const std::string& json_text, const std::string& path);

}  // namespace csan::foreign
