#include "../fuzz_targets.h"

namespace csan::fuzz {

const std::vector<NamedTarget>& all_targets() {
  static const std::vector<NamedTarget> targets{
      {"recipe", recipe},       {"dictionary", dictionary},     {"indexed_dataset", indexed_dataset},
      {"text_file", text_file}, {"score_inputs", score_inputs}, {"tokenizers", tokenizers},
      {"conllu", conllu},       {"safetensors", safetensors},   {"serve_request", serve_request},
  };
  return targets;
}

}  // namespace csan::fuzz
