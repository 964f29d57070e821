#include "toolkit/generation/checkpoint_ensemble.h"

#include "toolkit/core/config.h"
#include "toolkit/core/error.h"
#include "toolkit/models/model_registry.h"
#include "toolkit/nn/init.h"
#include "toolkit/training/training_options.h"

namespace csan::generation {

std::shared_ptr<models::EncoderDecoderModel> load_model(training::CheckpointReader& reader) {
  const auto& meta = reader.meta();
  core::Config cfg = core::Config::from_yaml_string(meta.recipe_yaml, training::train_schema(),
                                                    reader.path() + " (embedded recipe)");
  models::apply_arch_preset(cfg);
  const auto src = text::Dictionary::parse(meta.src_dict, reader.path() + " (source dictionary)");
  const auto tgt = text::Dictionary::parse(meta.tgt_dict, reader.path() + " (target dictionary)");
  models::ModelContext context{src.size(), tgt.size(), tgt.pad(), src == tgt};
  std::shared_ptr<models::EncoderDecoderModel> model;
  {
    nn::SkipInitialization skip;  // the checkpoint overwrites every weight
    model = models::build_model(cfg, context);
  }
  reader.load_model(*model);
  model->eval();
  return model;
}

LoadedEnsemble load_ensemble(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error("--path: no checkpoint given");
  LoadedEnsemble ensemble;
  for (size_t i = 0; i < paths.size(); ++i) {
    training::CheckpointReader reader(paths[i]);
    if (i == 0) {
      ensemble.meta = reader.meta();
      ensemble.src_dict = text::Dictionary::parse(ensemble.meta.src_dict, paths[i] + " (source dictionary)");
      ensemble.tgt_dict = text::Dictionary::parse(ensemble.meta.tgt_dict, paths[i] + " (target dictionary)");
      ensemble.sentencepiece = !ensemble.meta.spm_model.empty();
    } else if (reader.meta().src_dict != ensemble.meta.src_dict || reader.meta().tgt_dict != ensemble.meta.tgt_dict) {
      throw Error(paths[i] + ": its dictionaries differ from those of " + paths[0] +
                  " (an ensemble needs one vocabulary)");
    }
    ensemble.models.push_back(load_model(reader));
  }
  return ensemble;
}

std::vector<std::string> split_paths(const std::string& joined) {
  std::vector<std::string> paths;
  size_t start = 0;
  while (true) {
    const size_t colon = joined.find(':', start);
    std::string piece = joined.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!piece.empty()) paths.push_back(piece);
    if (colon == std::string::npos) return paths;
    start = colon + 1;
  }
}

}  // namespace csan::generation
