// What this CPU is, as Linux names it in /proc/cpuinfo: the model name and the flags of
// the first processor (avx2, avx512_bf16, amx_bf16, ...). Read once.
#pragma once

#include <set>
#include <string>

namespace csan::core {

const std::string& cpu_model_name();  // "unknown" where /proc/cpuinfo does not say
const std::set<std::string>& cpu_flags();
bool cpu_has(const std::string& flag);

}  // namespace csan::core
