// Line-oriented reading of UTF-8 text files with errors that name file and line.
#pragma once

#include <string>
#include <vector>

namespace csan {

// Reads all lines of `path` (only '\n' ends a line; a final line without '\n' counts;
// a trailing '\r' is kept). Throws csan::Error "PATH:LINE: invalid UTF-8 ..." on bad
// bytes and "PATH: cannot open ..." when missing or unreadable.
std::vector<std::string> read_lines(const std::string& path);

// Validates one line already read from `path` (1-based `line_number`) as UTF-8.
void check_utf8_line(const std::string& path, long line_number, const std::string& line);

}  // namespace csan
