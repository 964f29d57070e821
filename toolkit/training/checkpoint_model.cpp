#include "toolkit/training/checkpoint_model.h"

#include "toolkit/text/dictionary.h"
#include "toolkit/training/training_options.h"

namespace csan::training {

LoadedModel load_model_from_checkpoint(const std::string& path) {
  CheckpointReader reader(path);
  auto config = core::Config::from_yaml_string(reader.meta().recipe_yaml, train_schema(), path + " (recipe)");
  const auto src = text::Dictionary::parse(reader.meta().src_dict, path + " (source dictionary)");
  const auto tgt = text::Dictionary::parse(reader.meta().tgt_dict, path + " (target dictionary)");
  models::ModelContext context;
  context.src_vocab_size = src.size();
  context.tgt_vocab_size = tgt.size();
  context.pad_index = tgt.pad();
  context.joined_dictionary = src == tgt;
  auto model = models::build_model(config, context);
  reader.load_model(*model);
  model->eval();
  return LoadedModel{model, std::move(config), context, reader.meta()};
}

}  // namespace csan::training
