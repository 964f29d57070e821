#include "toolkit/generation/text_codec.h"

#include <sstream>

#include "toolkit/core/text_file.h"

namespace csan::generation {

void truncate_source(std::vector<int64_t>& ids, int64_t max_length, int64_t eos) {
  if (max_length <= 0 || static_cast<int64_t>(ids.size()) <= max_length) return;
  ids.resize(max_length);
  ids.back() = eos;
}

EncodedLine TextCodec::encode(const std::string& line, const std::string& origin, long line_number,
                              int64_t max_length) const {
  check_utf8_line(origin, line_number, line);
  std::vector<int32_t> ids;
  if (spm_) {
    ids = dict_.encode(spm_->encode(line), /*append_eos=*/true);
  } else {
    ids = dict_.encode_line(line, /*append_eos=*/true);
  }
  EncodedLine out;
  out.ids.assign(ids.begin(), ids.end());
  out.full_length = static_cast<int64_t>(out.ids.size());
  truncate_source(out.ids, max_length, dict_.eos());
  return out;
}

std::string TextCodec::decode(const std::vector<int64_t>& ids) const {
  const std::string joined = dict_.to_string(ids);
  if (!spm_) return joined;
  std::vector<std::string> pieces;
  std::istringstream in(joined);
  for (std::string piece; in >> piece;) pieces.push_back(piece);
  return spm_->decode(pieces);
}

}  // namespace csan::generation
