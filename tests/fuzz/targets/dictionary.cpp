// text::Dictionary on a dict.txt. What loads must save to a text that loads again to
// the same dictionary (csan-preprocess saves every dictionary it was given).
#include "toolkit/text/dictionary.h"

#include "../fuzz_targets.h"
#include "toolkit/core/error.h"

namespace csan::fuzz {

void dictionary(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  text::Dictionary dict;
  try {
    dict = text::Dictionary::parse(text, "fuzz.txt");
  } catch (const Error&) {
    return;
  }
  try {
    expect(text::Dictionary::parse(dict.to_text(), "to_text()") == dict, "to_text() loads as another dictionary");
  } catch (const Error& e) {
    throw InvariantBroken(std::string("to_text() output does not load again: ") + e.what());
  }
  // Encoding the file's own text and decoding the ids never leaves the dictionary.
  const std::vector<int32_t> ids = dict.encode_line(text);
  std::vector<int64_t> wide(ids.begin(), ids.end());
  (void)dict.to_string(wide, false);
  dict.finalize(2, 100, 8);
  expect(dict.size() % 8 == 0, "finalize() did not pad to a multiple of 8");
}

}  // namespace csan::fuzz
