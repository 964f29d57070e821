// csan-preprocess --task translation: raw parallel text -> SentencePiece model, fairseq
// dictionaries and binarized splits (csan::data::preprocess).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "toolkit/commands/task_command.h"
#include "toolkit/data/preprocess.h"

namespace csan::commands {

std::unique_ptr<TaskCommand> translation_preprocess_command();

// Shared with the multilingual task's csan-preprocess: "a,b" -> {"a", "b"} (empty items
// dropped), the --spm-* options bound to `p` (--spm-seed read signed into `spm_seed`),
// and the seed checked into `p`.
std::vector<std::string> split_commas(const std::string& list);
void add_sentencepiece_options(boost::program_options::options_description& options, data::PreprocessOptions& p,
                               int64_t& spm_seed);
void set_spm_seed(data::PreprocessOptions& p, int64_t spm_seed);

}  // namespace csan::commands
