// One libFuzzer executable per target: CSAN_FUZZ_TARGET names the function (set by
// tests/fuzz/CMakeLists.txt).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  csan::fuzz::CSAN_FUZZ_TARGET(data, size);
  return 0;
}
