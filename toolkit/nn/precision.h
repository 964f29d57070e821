// The precisions a model decodes in (csan-generate --precision, convert-checkpoint): named
// here and nowhere else. An option is parsed once into the enum; what a precision does
// with a model's projections is its projection kind (projection_kind.h).
#pragma once

#include <string>

namespace csan::nn {

enum class Precision { fp32, bf16, fp16, int8 };

// Every value, for what goes through them all (the registration test, error texts).
constexpr Precision kPrecisions[] = {Precision::fp32, Precision::bf16, Precision::fp16, Precision::int8};

// "fp32", "bf16", "fp16", "int8": the option's spelling.
const char* precision_name(Precision precision);

// The precision `text` names. Throws csan::Error "OPTION: unknown value 'x' (...)" listing
// the precisions with a registered projection kind.
Precision parse_precision(const std::string& text, const std::string& option);

}  // namespace csan::nn
