// The output folder of csan-export: built under a temporary name beside it and renamed into
// place only when every file is written (core/atomic_file.h AtomicDirectory), so a failed
// export leaves nothing behind and an existing folder as it was.
#pragma once

#include <functional>
#include <string>

namespace csan::foreign {

// Throws csan::Error "OUT: ..." when `out` is a file, or a folder that is not empty and
// `replace` is false (nothing is touched then). Call before the (slower) export itself.
void check_export_directory(const std::string& out, bool replace);

// Calls `fill` with the staging folder, then puts it in place of `out` (replacing an
// existing folder and everything in it).
void write_export_directory(const std::string& out, bool replace,
                            const std::function<void(const std::string& staging)>& fill);

}  // namespace csan::foreign
