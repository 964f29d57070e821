// Deletes a file or a directory tree, ignoring what is already gone: the one replacement
// for std::filesystem::remove_all in csan. PyTorch's pip wheels export their own copy of
// libstdc++'s filesystem functions from libtorch.so, and a program linked against them
// binds remove_all to that copy, which jumps to address 0 (seen with torch 2.11 on the GPU
// machine: csan-generate crashed after translating, before its summary). POSIX calls
// cannot be interposed that way.
#pragma once

#include <string>

namespace csan {

// True when nothing is left at `path` afterwards.
bool remove_tree(const std::string& path);

}  // namespace csan
