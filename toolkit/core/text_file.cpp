#include "toolkit/core/text_file.h"

#include <cstdio>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

namespace csan {

void check_utf8_line(const std::string& path, long line_number, const std::string& line) {
  size_t bad = utf8::find_invalid(line);
  if (bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(line[bad]));
    throw Error::at(path, line_number,
                    "invalid UTF-8 (byte " + std::string(byte) + " at column " +
                        std::to_string(bad + 1) + ")",
                    ErrorKind::bad_input);
  }
}

std::vector<std::string> read_lines(const std::string& path) {
  std::string data = read_file(path);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    lines.emplace_back(data, start, end - start);
    check_utf8_line(path, static_cast<long>(lines.size()), lines.back());
    start = end + 1;
  }
  return lines;
}

}  // namespace csan
