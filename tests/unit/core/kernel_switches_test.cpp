#include "toolkit/core/kernel_switches.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "toolkit/core/error.h"

namespace {

// Sets a variable for one test and puts back what was there.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedVariable() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(KernelSwitches, UnsetOrEmptyIsTheDefaultAndKnownValuesPass) {
  {
    ScopedVariable unset("CSAN_SGEMM", nullptr);
    EXPECT_EQ(csan::core::kernel_switch("CSAN_SGEMM"), "");
  }
  ScopedVariable empty("CSAN_INT8_KERNEL", "");
  EXPECT_EQ(csan::core::kernel_switch("CSAN_INT8_KERNEL"), "");
  for (const char* value : {"onednn", "libtorch"}) {
    ScopedVariable set("CSAN_SGEMM", value);
    EXPECT_EQ(csan::core::kernel_switch("CSAN_SGEMM"), value);
    EXPECT_NO_THROW(csan::core::check_kernel_switches());
  }
}

TEST(KernelSwitches, AnotherValueNamesTheVariableAndItsValues) {
  ScopedVariable set("CSAN_INT8_KERNEL", "LibTorch");
  try {
    csan::core::check_kernel_switches();
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()), "environment variable CSAN_INT8_KERNEL: 'LibTorch' is not one of csan, libtorch");
    EXPECT_EQ(e.kind(), csan::ErrorKind::bad_option);
  }
  EXPECT_THROW(csan::core::kernel_switch("CSAN_NO_SUCH_SWITCH"), csan::Error);
}

}  // namespace
