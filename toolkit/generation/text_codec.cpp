#include "toolkit/generation/text_codec.h"

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
  const std::vector<int32_t> ids =
      model_ ? dict_.encode(model_->encode(line), /*append_eos=*/true) : dict_.encode_line(line, /*append_eos=*/true);
  EncodedLine out;
  out.ids.assign(ids.begin(), ids.end());
  out.full_length = static_cast<int64_t>(out.ids.size());
  truncate_source(out.ids, max_length, dict_.eos());
  return out;
}

std::string TextCodec::decode(const std::vector<int64_t>& ids) const {
  return model_ ? model_->decode(dict_.symbols(ids)) : dict_.to_string(ids);
}

}  // namespace csan::generation
