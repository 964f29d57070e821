// Tagging as a library call, for programs that keep models loaded: the Python package's
// csan.Tagger and csan-generate on tagging checkpoints. The checkpoints are loaded once
// (several average their label probabilities); each call encodes its sentences with the
// checkpoints' vocabularies, cuts them into chunks of the data's chunk length as training
// did, and predicts a tag per word.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/data/conllu.h"
#include "toolkit/models/tagging_model.h"
#include "toolkit/tasks/tagging_task.h"

namespace csan::tasks {

struct TaggerOptions {
  std::vector<std::string> paths;  // checkpoints; several form an ensemble
  std::string device = "cpu";      // "cpu" or "cuda"
  int64_t threads = 0;             // LibTorch's CPU threads (process-wide; 0: leave as they are)
};

// A CoNLL-U corpus with the predicted tags, and how many of them match the input's.
struct TaggedConllu {
  std::string text;     // the input with the model's column replaced, every other line unchanged
  int64_t words = 0;    // syntactic words tagged
  int64_t gold = 0;     // words whose input tag was given (not "_")
  int64_t correct = 0;  // of those, tagged the same
};

class Tagger {
 public:
  // Throws csan::Error naming the file or option (a missing or corrupt checkpoint, one
  // that is not a tagging model, ensemble members with other vocabularies, a bad device).
  // `first`, when given, is options.paths[0] already opened.
  explicit Tagger(const TaggerOptions& options, checkpoint::CheckpointReader* first = nullptr);

  // One tag per word of each sentence (word forms); `batch_size` chunks per batch (0: all
  // at once). Calls from several threads take turns.
  std::vector<std::vector<std::string>> tag(const std::vector<std::vector<std::string>>& sentences,
                                            int64_t batch_size = 64);
  TaggedConllu tag_conllu(const data::ConllCorpus& corpus, int64_t batch_size = 64);

  data::TagColumn column() const { return data_.info.column; }
  std::string device() const { return device_.str(); }

 private:
  std::vector<std::shared_ptr<models::TaggingModel>> models_;
  TaggingCheckpointData data_;
  torch::Device device_ = torch::kCPU;
  std::mutex mutex_;
};

}  // namespace csan::tasks
