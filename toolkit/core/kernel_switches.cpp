#include "toolkit/core/kernel_switches.h"

#include <cstdlib>
#include <vector>

#include "toolkit/core/error.h"

namespace csan::core {

namespace {

struct Switch {
  const char* name;
  std::vector<std::string> values;  // the first is the default
};

const std::vector<Switch>& switches() {
  static const std::vector<Switch> all = {{"CSAN_SGEMM", {"onednn", "libtorch"}},
                                          {"CSAN_INT8_KERNEL", {"csan", "libtorch"}}};
  return all;
}

}  // namespace

std::string kernel_switch(const std::string& name) {
  for (const Switch& s : switches()) {
    if (name != s.name) continue;
    const char* set = std::getenv(s.name);
    const std::string value = set ? set : "";
    if (value.empty()) return value;
    std::string choices;
    for (const std::string& v : s.values) {
      if (v == value) return value;
      choices += (choices.empty() ? "" : ", ") + v;
    }
    throw Error("environment variable " + name + ": '" + value + "' is not one of " + choices, ErrorKind::bad_option);
  }
  throw Error("internal: no kernel switch " + name);
}

void check_kernel_switches() {
  for (const Switch& s : switches()) kernel_switch(s.name);
}

}  // namespace csan::core
