// The comma-separated option values of the benchmarks (--arch a,b --precision fp32,bf16).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace csan::bench {

// The non-empty items of "a,b,,c", in order.
inline std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace csan::bench
