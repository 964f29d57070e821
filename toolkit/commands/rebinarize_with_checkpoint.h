// csan-train --reuse-dictionaries for translation data: the raw text a data directory was
// binarized from (the prefixes its preprocess.json records) binarized again with a
// checkpoint's SentencePiece model and dictionaries, by the same call as
// csan-preprocess --from-checkpoint, so that a model can be fine-tuned on it.
#pragma once

#include <string>

namespace csan::commands {

struct RebinarizedData {
  std::string data_dir;  // the data to train on
  std::string note;      // what was done, a line for the log
};

// When `data_dir` already holds the checkpoint's dictionaries and SentencePiece model, it is
// the data to train on. Otherwise `destdir`, written as csan-preprocess --from-checkpoint
// CHECKPOINT --destdir DESTDIR writes it with the recorded languages, prefixes and length
// filter (byte for byte the same files), under a temporary name renamed when complete; a
// `destdir` already complete with these settings is reused as it is. Throws a one-line
// csan::Error for a data directory without preprocess.json or without recorded training
// prefixes, a recorded raw file that is gone (naming it), a `destdir` holding other
// settings, and what csan-preprocess --from-checkpoint refuses.
RebinarizedData rebinarize_with_checkpoint(const std::string& data_dir, const std::string& checkpoint,
                                           const std::string& destdir, int workers);

}  // namespace csan::commands
