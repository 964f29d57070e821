// Environment variables that send one kind of product to another kernel, for comparisons
// (docs/fast-cpu-decoding.md): CSAN_SGEMM (onednn, libtorch) chooses where inference's
// float products go, CSAN_INT8_KERNEL (csan, libtorch) where the int8 ones go.
//
// Why checked at all: they are read once, deep inside the first product, and a misspelt
// value there would silently time the default kernel under the other one's name. Every
// program checks them before it starts (run_main), the Python package when it loads its
// models' half.
#pragma once

#include <string>

namespace csan::core {

// The value of the switch `name` ("" when unset or empty). Throws csan::Error (bad_option)
// naming the variable and the values it takes when it holds another, or when `name` is no
// switch.
std::string kernel_switch(const std::string& name);

// Checks every switch; throws as kernel_switch does for the first bad one.
void check_kernel_switches();

}  // namespace csan::core
