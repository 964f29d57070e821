// The vocabulary of a translation checkpoint (its languages, dictionaries and
// SentencePiece model), read from the file's metadata without LibTorch, for
// csan-preprocess --from-checkpoint: new data binarized with them fine-tunes the model.
#pragma once

#include <string>

#include "toolkit/data/preprocess.h"

namespace csan::commands {

struct CheckpointVocabulary {
  std::string src_lang, tgt_lang;
  std::string src_dict, tgt_dict;  // dict.txt text
  std::string spm_model;           // model bytes ("" when the data had none)
};

// Throws a one-line csan::Error naming `path` for a file that is not a csan format 3
// checkpoint (formats 1 and 2: convert it with tools/convert-checkpoint), one of another
// task, or one without dictionaries.
CheckpointVocabulary read_checkpoint_vocabulary(const std::string& path);

// Writes spm.model (when there is one) and dict.SRC.txt, dict.TGT.txt into `dir`.
void write_checkpoint_vocabulary(const CheckpointVocabulary& vocabulary, const std::string& dir);

// --from-checkpoint (csan-preprocess, and csan-train --reuse-dictionaries): the
// SentencePiece model and dictionaries of `options.from_checkpoint`, extracted into a
// temporary directory that lives as long as this object, become the options' --spm-model,
// --srcdict and --tgtdict (--joined-dictionary when both are one), and its languages their
// defaults. Throws a one-line csan::Error for an option that gives these otherwise (naming
// it), a language other than the checkpoint's, and a checkpoint read_checkpoint_vocabulary
// refuses.
class CheckpointVocabularyFiles {
 public:
  explicit CheckpointVocabularyFiles(data::PreprocessOptions& options);
  // The same with the checkpoint's vocabulary already read.
  CheckpointVocabularyFiles(data::PreprocessOptions& options, const CheckpointVocabulary& vocabulary);
  ~CheckpointVocabularyFiles();
  CheckpointVocabularyFiles(const CheckpointVocabularyFiles&) = delete;
  CheckpointVocabularyFiles& operator=(const CheckpointVocabularyFiles&) = delete;

 private:
  std::string dir_;
};

}  // namespace csan::commands
