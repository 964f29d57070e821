// Architectures by name. "model.arch" names either a family ("transformer") or a preset
// of it ("transformer_base"): a preset supplies default values that the recipe may
// override. The trainer and generator only call the functions below.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "toolkit/core/config.h"
#include "toolkit/core/registry.h"
#include "toolkit/models/encoder_decoder_model.h"

namespace csan::models {

// What a model needs to know about the data (from the dictionaries).
struct ModelContext {
  int64_t src_vocab_size = 0;
  int64_t tgt_vocab_size = 0;
  int64_t pad_index = 1;
  bool joined_dictionary = false;
};

using ModelBuilder = std::function<std::shared_ptr<EncoderDecoderModel>(const core::Config&, const ModelContext&)>;

struct ArchSpec {
  // Declares the family's "model.*" keys (several archs of one family share them).
  std::function<void(core::ConfigSchema&)> declare_options;
  ModelBuilder build;
  // Defaults this arch name supplies ("model.embed_dim" -> 512, ...).
  std::map<std::string, core::Value> preset;
};

core::Registry<ArchSpec>& arch_registry();

// Declares "model.arch" (allowed values: registered_archs()) and every key of every
// registered arch.
void declare_model_options(core::ConfigSchema& schema);
// Fills the preset of cfg's "model.arch" into keys the recipe did not set.
// Throws csan::Error "unknown arch 'x'; known: ..." for an unregistered name.
void apply_arch_preset(core::Config& cfg);
// Builds the model named by "model.arch" (apply_arch_preset must have run; build_model
// runs it again, which is harmless).
std::shared_ptr<EncoderDecoderModel> build_model(const core::Config& cfg, const ModelContext& context);
std::vector<std::string> registered_archs();

}  // namespace csan::models

// Object files of a static library are linked only when referenced, and an arch file
// is referenced by nobody: each one says CSAN_ARCH_ANCHOR(file_stem) once and is listed
// in model_registry.cpp's anchor list, which keeps its registrars in every binary.
#define CSAN_ARCH_ANCHOR(stem) \
  namespace csan::models::anchors { void stem() {} }
