#include "toolkit/core/error.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>

#include "toolkit/core/checked_output.h"
#include "toolkit/core/kernel_switches.h"

namespace csan {

Error Error::at(const std::string& file, long line, const std::string& message, ErrorKind kind) {
  std::string where = file;
  if (line > 0) where += ":" + std::to_string(line);
  return Error(where + ": " + message, kind);
}

Error Error::for_key(const std::string& key, const std::string& message) {
  return Error("key '" + key + "': " + message, ErrorKind::bad_option);
}

namespace {
// Errors must fit on one line even if a message embeds a newline.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

// "PATH: operation: reason" instead of libstdc++'s "filesystem error: operation: reason
// [PATH]", so that the path comes first as in every other message.
std::string describe(const std::filesystem::filesystem_error& e) {
  std::string operation = e.what();
  const std::string prefix = "filesystem error: ";
  if (operation.rfind(prefix, 0) == 0) operation.erase(0, prefix.size());
  const std::string reason = e.code().message();
  if (auto at = operation.find(": " + reason); at != std::string::npos) {
    operation.erase(at);
  } else if (auto bracket = operation.find(" ["); bracket != std::string::npos) {
    operation.erase(bracket);
  }
  std::string where = e.path1().string();
  if (!e.path2().empty()) where += " -> " + e.path2().string();
  return (where.empty() ? "" : where + ": ") + operation + ": " + reason;
}

}  // namespace

int run_main(const char* program, int (*body)(int, char**), int argc, char** argv) {
  try {
    core::check_kernel_switches();
    return body(argc, argv);
  } catch (const OutputClosed&) {
    return kClosedPipeExitCode;  // quietly, as cat does under `| head`
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", program);
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, one_line(describe(e)).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, one_line(e.what()).c_str());
  }
  return 1;
}

}  // namespace csan
