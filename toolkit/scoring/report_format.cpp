#include "toolkit/scoring/report_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/core/utf8.h"

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

namespace {
void append_u_escape(std::string& out, unsigned unit) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", unit & 0xffffu);
  out += buf;
}
}  // namespace

std::string json_string(std::string_view utf8, bool ensure_ascii) {
  std::string out = "\"";
  const std::u32string text = utf8::decode(utf8);
  for (char32_t c : text) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20) {
      append_u_escape(out, c);
    } else if (ensure_ascii && c > 0x7e) {
      if (c >= 0x10000) {  // a UTF-16 surrogate pair, as Python writes it
        const char32_t v = c - 0x10000;
        append_u_escape(out, 0xd800 + (v >> 10));
        append_u_escape(out, 0xdc00 + (v & 0x3ff));
      } else {
        append_u_escape(out, c);
      }
    } else {
      utf8::append(out, c);
    }
  }
  return out + "\"";
}

std::size_t code_points(std::string_view utf8) {
  std::size_t count = 0;
  for (char c : utf8)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++count;
  return count;
}

}  // namespace csan::scoring
