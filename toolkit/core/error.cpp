#include "toolkit/core/error.h"

#include <cstdio>
#include <exception>
#include <new>

namespace csan {

Error Error::at(const std::string& file, long line, const std::string& message) {
  std::string where = file;
  if (line > 0) where += ":" + std::to_string(line);
  return Error(where + ": " + message);
}

Error Error::for_key(const std::string& key, const std::string& message) {
  return Error("key '" + key + "': " + message);
}

namespace {
// Errors must fit on one line even if a message embeds a newline.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}
}  // namespace

int run_main(const char* program, int (*body)(int, char**), int argc, char** argv) {
  try {
    return body(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, one_line(e.what()).c_str());
  }
  return 1;
}

}  // namespace csan
