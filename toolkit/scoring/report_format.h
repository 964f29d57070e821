// Python's number and string formatting, as sacreBLEU's outputs use it: f"{x:.Nf}",
// repr(float) (shortest round-trip digits), and json.dumps string escaping (nlohmann's,
// which escapes as json.dumps does). The numbers stay csan's own: nlohmann::json writes
// 1e15 as 1e+15 (Python: 1000000000000000.0) and NaN as null (Python: NaN), so its
// output would not be sacreBLEU's to the character.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace csan::scoring {

// f"{value:.{width}f}" (correctly rounded, ties to even on the exact binary value).
std::string format_fixed(double value, int width);
// float(f"{value:.{width}f}"): the score as sacreBLEU's JSON stores it.
double round_to_width(double value, int width);
// repr(float): shortest digits that round-trip; '1e-05' / '1e+16' outside [1e-4, 1e16).
std::string python_repr(double value);
// json.dumps of a float ("NaN", "Infinity" for the non-finite ones) or of None.
std::string json_number(std::optional<double> value);
// json.dumps of a UTF-8 string, with or without ensure_ascii.
std::string json_string(std::string_view utf8, bool ensure_ascii);
// Length in code points (tabulate without wcwidth measures cells this way).
std::size_t code_points(std::string_view utf8);

}  // namespace csan::scoring
