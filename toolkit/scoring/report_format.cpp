#include "toolkit/scoring/report_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "toolkit/core/error.h"

namespace csan::scoring {

std::string format_fixed(double value, int width) {
  if (width < 0) throw Error("--width must not be negative (got " + std::to_string(width) + ")", ErrorKind::bad_option);
  const int size = std::snprintf(nullptr, 0, "%.*f", width, value);
  std::string out(static_cast<std::size_t>(size), '\0');
  std::snprintf(out.data(), out.size() + 1, "%.*f", width, value);
  return out;
}

double round_to_width(double value, int width) { return std::strtod(format_fixed(value, width).c_str(), nullptr); }

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string text(buf, result.ptr);
  // text = [-]d[.ddd]e(+|-)XX
  const bool negative = text[0] == '-';
  const std::size_t e = text.find('e');
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i)
    if (text[i] != '.') digits += text[i];
  const int exponent = std::atoi(text.c_str() + e + 1);
  const int decpt = exponent + 1;  // value = 0.digits * 10^decpt
  std::string out = negative ? "-" : "";
  if (value == 0.0) return out + "0.0";
  if (decpt <= -4 || decpt > 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_buf;
  }
  if (decpt <= 0) return out + "0." + std::string(static_cast<std::size_t>(-decpt), '0') + digits;
  if (static_cast<std::size_t>(decpt) >= digits.size())
    return out + digits + std::string(static_cast<std::size_t>(decpt) - digits.size(), '0') + ".0";
  return out + digits.substr(0, static_cast<std::size_t>(decpt)) + "." + digits.substr(static_cast<std::size_t>(decpt));
}

std::string json_number(std::optional<double> value) {
  if (!value) return "null";
  if (std::isnan(*value)) return "NaN";
  if (std::isinf(*value)) return *value > 0 ? "Infinity" : "-Infinity";
  return python_repr(*value);
}

std::string json_string(std::string_view utf8, bool ensure_ascii) {
  // nlohmann escapes as json.dumps does: \" \\ \b \f \n \r \t, other controls (and with
  // ensure_ascii everything from U+007F) as lowercase \u00XX, UTF-16 surrogate pairs above U+FFFF.
  return nlohmann::json(std::string(utf8)).dump(-1, ' ', ensure_ascii, nlohmann::json::error_handler_t::replace);
}

std::size_t code_points(std::string_view utf8) {
  std::size_t count = 0;
  for (char c : utf8)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  return count;
}

}  // namespace csan::scoring
