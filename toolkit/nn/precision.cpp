#include "toolkit/nn/precision.h"

#include "toolkit/core/error.h"
#include "toolkit/nn/projection_kind.h"

namespace csan::nn {

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::fp32:
      return "fp32";
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "fp16";
    case Precision::int8:
      return "int8";
  }
  throw Error("internal: a precision without a name");
}

Precision parse_precision(const std::string& text, const std::string& option) {
  for (const Precision p : kPrecisions)
    if (text == precision_name(p)) return p;
  // Training's mixed precision has a name decoding does not take.
  if (text == "amp") throw Error(option + ": amp is for training; GPU decoding takes fp16 or bf16", ErrorKind::bad_option);
  throw Error(option + ": unknown value '" + text + "' (" + projection_kinds().known() + ")", ErrorKind::bad_option);
}

}  // namespace csan::nn
