// tools/convert-checkpoint --format 3: a checkpoint of any format csan reads (1, 2 or 3)
// rewritten as format 3 (what csan writes), with everything it holds: the weights (an
// inference-only checkpoint's int8/bf16 projections and int8 scales as stored), and for a
// training checkpoint what resuming needs (optimizer state, now by parameter name; the
// components' sections such as precision's loss scaler and master weights; RNG states;
// progress), so that decoding and resuming from the result equal the original's.
#pragma once

#include <string>

#include "toolkit/loading/model_loader.h"

namespace csan::loading {

// Writes `output` atomically. Throws csan::Error naming the file.
void rewrite_as_format3(const std::string& input, const std::string& output, const DescribeModel& describe);

}  // namespace csan::loading
