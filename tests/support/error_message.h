// Shared by the generation and training tests that check a csan::Error's message: the
// message of the error that f throws, or "" when it throws none, so that
// EXPECT_NE(message_of(f), "") asserts that f throws. (csan::testing::error_of in
// model_fixtures.h answers "(no error)" instead.)
#pragma once

#include <functional>
#include <string>

#include "toolkit/core/error.h"

namespace csan::testing {

inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace csan::testing
