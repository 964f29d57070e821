// The tagging task ("task.name: tagging"): CoNLL-U tagging data binarized by
// csan-preprocess --task tagging (toolkit/data/tagging_data.h), TaggingModel models (the
// convoluted-attention tagger, arch "tagger"), cross-entropy over the real words
// (padding slots ignored; criterion.label_smoothing applies), token accuracy as the
// validation metric ("accuracy", higher is better: checkpoint.best_checkpoint_metric and
// patience can follow it), and csan-generate --input FILE.conllu writing CoNLL-U with the
// predicted tags. Batch fields: tagging_batch.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/data/tagging_data.h"
#include "toolkit/data/tagging_protocol.h"
#include "toolkit/models/model_context.h"

namespace csan::tasks {

// What a tagging checkpoint holds of its data: the three vocabularies and the info.
struct TaggingCheckpointData {
  data::TaggingVocabularies vocabularies;
  data::TaggingDataInfo info;
};

// Written into checkpoints (CheckpointMeta::data) and read back; throws csan::Error
// naming `path` for missing or malformed entries.
std::map<std::string, std::string> tagging_meta_data(const TaggingCheckpointData& data);
TaggingCheckpointData tagging_data_from_meta(const checkpoint::CheckpointMeta& meta, const std::string& path);

models::ModelContext tagging_context(const TaggingCheckpointData& data);

}  // namespace csan::tasks
