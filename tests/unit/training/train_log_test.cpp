// truncate_metrics, as a resumed run calls it on metrics.jsonl: the records after the
// checkpoint's update go, the others stay byte for byte (also an earlier build's, whose
// numbers had 17 digits), and a damaged line is an error naming it that changes nothing.
#include "toolkit/training/train_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/error_message.h"
#include "toolkit/core/atomic_file.h"

namespace csan::training {
namespace {

std::string metrics_file(const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("csan_train_log_" + std::to_string(::getpid()) + ".jsonl")).string();
  write_file_atomically(path, text);
  return path;
}

TEST(TruncateMetrics, DropsLaterUpdatesAndACutLine) {
  const std::string kept =
      "{\"epoch\": 1, \"kind\": \"train\", \"loss\": 7.0861887931823733, \"update\": 1}\n"
      "{\"kind\": \"note\"}\n"
      "{\"epoch\": 1, \"kind\": \"valid\", \"loss\": 6.5, \"update\": 2}\n";
  const std::string path = metrics_file(kept + "{\"kind\": \"train\", \"update\": 3}\n{\"kind\": \"tr");
  EXPECT_EQ(truncate_metrics(path, 2), 2u);
  EXPECT_EQ(read_file(path), kept);
  EXPECT_EQ(truncate_metrics(path, 2), 0u);
  EXPECT_EQ(read_file(path), kept);
  std::filesystem::remove(path);
  EXPECT_EQ(truncate_metrics(path, 2), 0u) << "a missing file is fine";
}

TEST(TruncateMetrics, ADamagedLineIsAnErrorThatChangesNothing) {
  const std::string text =
      "{\"kind\": \"train\", \"update\": 1}\n{\"kind\": \"train\" \"update\": 2}\n"
      "{\"kind\": \"train\", \"update\": 3}\n";
  const std::string path = metrics_file(text);
  EXPECT_EQ(csan::testing::message_of([&] { truncate_metrics(path, 1); }),
            path +
                ":2: malformed JSON at column 25: syntax error while parsing object - unexpected string "
                "literal; expected '}'");
  EXPECT_EQ(read_file(path), text);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace csan::training
