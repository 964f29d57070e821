// A binarized dataset must only hold ids its dictionary has: an id past the end would
// index past an embedding table (a LibTorch stack trace in the middle of training), and a
// .bin written for another dictionary would train on the wrong words without a sign.
#pragma once

#include <cstdint>
#include <string>

#include "toolkit/data/indexed_dataset.h"

namespace csan::data {

// Throws csan::Error at the first token id outside [0, dictionary_size):
// "PREFIX.bin: record 12, position 3: token id 40000 is not in dict.de.txt (32000 entries)".
// `prefix` is the one the dataset was opened with; `dictionary_name` names the dictionary
// (its file, or "the dictionary").
void check_token_ids(const MMapIndexedDataset& dataset, const std::string& prefix, int64_t dictionary_size,
                     const std::string& dictionary_name = "the dictionary");

}  // namespace csan::data
