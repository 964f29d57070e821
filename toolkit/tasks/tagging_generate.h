// csan-generate on tagging checkpoints: tags a CoNLL-U file (--input FILE.conllu, or -
// for stdin) and writes it back with the predicted tag in the column the model learned
// (UPOS or XPOS), every other line unchanged, to stdout or DIR/generate-input.conllu
// (--results-path). Several checkpoints (a:b) average their label probabilities.
// Sentences longer than the data's chunk length are tagged chunk by chunk, as in
// training. A summary (sentences, words, speed, and the accuracy against the input's own
// tags when it has them) goes to the log.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <iosfwd>
#include <memory>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/tasks/generate.h"

namespace csan::tasks {

// The task's section of csan-generate's options, bound to `options`.
std::unique_ptr<boost::program_options::options_description> tagging_generate_options(GenerateOptions& options);

// Throws csan::Error for --data (tagging reads CoNLL-U), checkpoints with other
// vocabularies, and malformed input (naming file and line).
void generate_tags(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                   std::ostream& log);

}  // namespace csan::tasks
