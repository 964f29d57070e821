// A check of a checkpoint archive before LibTorch reads it. LibTorch's unpickler takes the
// length of a string or byte run from the file and allocates and clears that much before
// it finds the file too short: a crafted archive behind a valid checksum made it clear
// 3 GB (found by the checkpoint fuzz target). This walks the pickles of the archive's
// uncompressed records and refuses any length that runs past its record, so that such a
// file is a one-line error instead.
#pragma once

#include <cstddef>
#include <string>

namespace csan::checkpoint {

// "" when every pickle record (*.pkl) of the zip archive holds only lengths that fit; else
// what is wrong. Records the check cannot follow (compressed, zip64, an opcode it does not
// know) are left to LibTorch.
std::string archive_length_problem(const char* data, size_t size);

}  // namespace csan::checkpoint
