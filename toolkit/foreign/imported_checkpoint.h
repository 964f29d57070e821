// Writes an imported translation model as a csan checkpoint (format 3, CheckpointWriter):
// the recipe an importer derived, the dictionaries and SentencePiece model(s) as the
// translation task embeds them, and the weights under csan's names. The model is built
// from that recipe first, so every parameter is checked by name and shape against what
// csan-generate will build.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

namespace csan::foreign {

struct ImportedTranslationModel {
  std::string origin;  // the imported file, for errors ("checkpoint.pt")
  // recipe keys ("model.embed_dim") -> YAML scalars; task.name is translation.
  std::map<std::string, std::string> recipe;
  std::string src_lang, tgt_lang;
  std::string src_dict, tgt_dict;            // dict.txt contents
  std::string src_dict_path, tgt_dict_path;  // where they came from, for errors
  std::string spm_model;                     // source side (and target when tgt_spm_model is ""), "" if none
  std::string tgt_spm_model;                 // target side when it differs from the source's
  std::string detokenizer;                   // "marian": LoadedEnsemble::detokenizer; "": SentencePiece's
  // csan name -> tensor; each name of the origin, for errors.
  std::map<std::string, torch::Tensor> weights;
  std::map<std::string, std::string> origin_names;
};

// `value` as a YAML float scalar that reads back exactly ("0.1", "1.0").
std::string yaml_number(double value);

// Throws csan::Error naming the origin (or dictionary) file and the parameter for a
// missing, unexpected or misshapen tensor; nothing is written then.
void write_imported_checkpoint(const ImportedTranslationModel& imported, const std::string& output);

}  // namespace csan::foreign
