#include "toolkit/foreign/export_directory.h"

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"

namespace fs = std::filesystem;

namespace csan::foreign {

void check_export_directory(const std::string& out, bool replace) {
  if (out.empty()) throw Error("the output folder is empty (give --out DIR)", ErrorKind::bad_option);
  if (!fs::exists(out)) return;
  if (!fs::is_directory(out))
    throw Error(out + ": exists and is not a folder (csan-export writes a folder)", ErrorKind::bad_option);
  if (!replace && !fs::is_empty(out))
    throw Error(out + ": exists and is not empty (nothing written; --force replaces it)", ErrorKind::bad_option);
}

void write_export_directory(const std::string& out, bool replace,
                            const std::function<void(const std::string& staging)>& fill) {
  check_export_directory(out, replace);
  AtomicDirectory directory(out);
  fill(directory.staging());
  directory.commit();
}

}  // namespace csan::foreign
