// Checkpoint formats 1 and 2, read only: a LibTorch serialization archive (a zip of
// pickles) followed by a checksum trailer (magic, a 64-bit hash of the archive bytes and
// their length). The archive is checked (archive_check.h) before LibTorch parses it.
#pragma once

#include <string>

#include "toolkit/checkpoint/stored_checkpoint.h"

namespace csan::checkpoint {

// Whether a file starting with `head` (its first bytes, at least 2) is such an archive.
bool is_legacy_archive(const std::string& head);

// Throws csan::Error "PATH: ..." if the file is truncated, corrupt or not a checkpoint.
OpenedCheckpoint open_legacy_archive(const std::string& path);

// Appends the checksum trailer to serialized archive bytes (the tests and the checkpoint
// fuzz target seal crafted archives with it).
void append_trailer(std::string& archive_bytes);

}  // namespace csan::checkpoint
