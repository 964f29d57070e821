// One error type for the whole toolkit. It carries where the problem is (file, line,
// key) so that executables can print a single line that names it and exit non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace csan {

// What went wrong, for front ends that distinguish failures (the Python package raises
// csan.BadOptionError, csan.MissingFileError, ... from it); the executables only print
// the message. Most errors stay `general`.
enum class ErrorKind {
  general,
  bad_option,          // an option, configuration key or argument value is invalid
  bad_input,           // input data is malformed (invalid UTF-8, mismatched line counts, ...)
  missing_file,        // a named file does not exist
  corrupt_checkpoint,  // a checkpoint cannot be read as one
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::general)
      : std::runtime_error(message), kind_(kind) {}

  // "FILE:LINE: message" (line omitted when 0), the form compilers use, so editors jump to it.
  static Error at(const std::string& file, long line, const std::string& message, ErrorKind kind = ErrorKind::general);
  // "key 'KEY': message", for configuration and option errors (kind bad_option).
  static Error for_key(const std::string& key, const std::string& message);

  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Runs body and maps any exception to one line on stderr ("PROGRAM: error: ...") and
// exit code 1 (a std::filesystem error as "PATH: operation: reason"); a closed output
// pipe (OutputClosed, checked_output.h) ends quietly with 141. Success returns body's exit
// code. Used by every executable's main().
int run_main(const char* program, int (*body)(int, char**), int argc, char** argv);

}  // namespace csan
