// The settings of a fairseq `transformer` family checkpoint (checkpoint.pt), as the
// recipe keys of csan's Transformer. fairseq keeps them in cfg["model"] (a dict, or an
// argparse.Namespace for the legacy archs) or, before 2021, in state["args"] (a
// Namespace); sizes a checkpoint leaves out come from its arch's defaults
// (fairseq/models/transformer/transformer_legacy.py).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "toolkit/foreign/pickle_reader.h"

namespace csan::foreign {

struct FairseqSettings {
  std::string arch;
  std::string source_lang, target_lang;  // "" when the checkpoint does not say
  // csan recipe keys ("model.embed_dim", ...) with their values as YAML scalars.
  std::map<std::string, std::string> recipe;
};

// Throws csan::Error "PATH: FIELD: ..." for an arch outside fairseq's transformer model
// (bart, lightconv, ...) and for every setting csan's Transformer cannot express.
FairseqSettings read_fairseq_settings(const PickleValue& checkpoint, const std::string& path);

}  // namespace csan::foreign
