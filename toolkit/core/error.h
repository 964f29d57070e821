// One error type for the whole toolkit. It carries where the problem is (file, line,
// key) so that executables can print a single line that names it and exit non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace csan {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}

  // "FILE:LINE: message" (line omitted when 0), the form compilers use, so editors jump to it.
  static Error at(const std::string& file, long line, const std::string& message);
  // "key 'KEY': message", for configuration and option errors.
  static Error for_key(const std::string& key, const std::string& message);
};

// Runs body and maps any exception to one line on stderr ("PROGRAM: error: ...") and
// exit code 1 (a std::filesystem error as "PATH: operation: reason"); a closed output
// pipe (OutputClosed, checked_output.h) ends quietly with 141. Success returns body's exit
// code. Used by every executable's main().
int run_main(const char* program, int (*body)(int, char**), int argc, char** argv);

}  // namespace csan
