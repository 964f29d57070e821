// Models rebuilt from self-contained checkpoints: each one's embedded recipe names its
// architecture, its dictionaries size the embeddings. Several checkpoints form an
// ensemble; they must share the dictionaries (the search averages their
// distributions over one target vocabulary).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/models/encoder_decoder_model.h"
#include "toolkit/text/dictionary.h"
#include "toolkit/training/checkpoint.h"

namespace csan::generation {

struct LoadedEnsemble {
  std::vector<std::shared_ptr<models::EncoderDecoderModel>> models;
  training::CheckpointMeta meta;  // of the first checkpoint
  text::Dictionary src_dict, tgt_dict;
  bool sentencepiece = false;  // the data was encoded with a SentencePiece model
};

// Builds the model a checkpoint describes and loads its weights (eval mode).
std::shared_ptr<models::EncoderDecoderModel> load_model(training::CheckpointReader& reader);

// Throws csan::Error naming the file for a missing or corrupt checkpoint, and for an
// ensemble member whose dictionaries differ from the first one's.
LoadedEnsemble load_ensemble(const std::vector<std::string>& paths);

// "a.pt:b.pt" -> {"a.pt", "b.pt"} (fairseq's --path separator).
std::vector<std::string> split_paths(const std::string& joined);

}  // namespace csan::generation
