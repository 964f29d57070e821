// core::read_lines and utf8 on raw bytes: a file reads iff it is valid UTF-8, and then
// its lines joined with '\n' give the file back.
#include "toolkit/core/text_file.h"

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

namespace csan::fuzz {

void text_file(const uint8_t* data, size_t size) {
  const std::string contents(reinterpret_cast<const char*>(data), size);
  const size_t invalid = utf8::find_invalid(contents);
  if (invalid == std::string::npos) {
    expect(utf8::encode(utf8::decode(contents)) == contents, "decode/encode changed valid UTF-8");
  } else {
    expect(utf8::is_valid(std::string_view(contents).substr(0, invalid)),
           "the text before the first bad byte is invalid");
  }
  const std::string path = scratch_file("lines.txt", contents);
  try {
    const std::vector<std::string> lines = read_lines(path);
    expect(invalid == std::string::npos, "read_lines accepted invalid UTF-8");
    std::string joined;
    for (const auto& line : lines) joined += line + "\n";
    const bool ends_with_newline = !contents.empty() && contents.back() == '\n';
    if (!ends_with_newline && !joined.empty()) joined.pop_back();
    expect(joined == contents, "read_lines lost or changed bytes");
  } catch (const Error&) {
    expect(invalid != std::string::npos, "read_lines refused valid UTF-8");
  }
}

}  // namespace csan::fuzz
