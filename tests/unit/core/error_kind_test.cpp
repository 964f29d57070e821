// csan::Error's kind, which front ends (the Python package) turn into distinct exceptions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"

namespace {

csan::ErrorKind kind_of(void (*body)()) {
  try {
    body();
  } catch (const csan::Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected a csan::Error";
  return csan::ErrorKind::general;
}

TEST(ErrorKind, DefaultsToGeneral) {
  EXPECT_EQ(csan::Error("x").kind(), csan::ErrorKind::general);
  EXPECT_EQ(csan::Error::at("f.txt", 3, "x").kind(), csan::ErrorKind::general);
  EXPECT_EQ(csan::Error::at("f.txt", 3, "x", csan::ErrorKind::bad_input).kind(), csan::ErrorKind::bad_input);
  EXPECT_STREQ(csan::Error::at("f.txt", 3, "x", csan::ErrorKind::bad_input).what(), "f.txt:3: x");
}

TEST(ErrorKind, KeysAreOptions) {
  EXPECT_EQ(csan::Error::for_key("optimization.lr", "must be positive").kind(), csan::ErrorKind::bad_option);
}

TEST(ErrorKind, MissingFileAndBadText) {
  EXPECT_EQ(kind_of([] { csan::read_lines("/nonexistent/csan/file.txt"); }), csan::ErrorKind::missing_file);
  EXPECT_EQ(kind_of([] { csan::read_file("/"); }), csan::ErrorKind::general);  // a directory exists
  EXPECT_EQ(kind_of([] {
              const auto path =
                  std::filesystem::temp_directory_path() / ("csan_error_kind_" + std::to_string(::getpid()) + ".txt");
              csan::write_file_atomically(path.string(), "fine\nbad \xff\n");
              csan::read_lines(path.string());
            }),
            csan::ErrorKind::bad_input);
}

}  // namespace
