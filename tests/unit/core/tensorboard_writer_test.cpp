// The writer's files are read back by a reader written here from the public specs
// (TFRecord framing with its own bit-by-bit CRC-32C, protobuf wire format, the field
// numbers of event.proto / summary.proto), so a mistake shared by writer and library
// reader cannot hide. When TensorBoard's Python package is installed, its own reader
// loads them too.
#include "toolkit/core/tensorboard_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/text_files.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/crc32c.h"
#include "toolkit/core/error.h"

namespace fs = std::filesystem;
using csan::testing::slurp;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("csan_tensorboard_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// ---- the test's own reader -------------------------------------------------------

uint32_t bitwise_crc32c(const std::string& bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
  }
  return ~crc;
}
uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

uint64_t little_endian(const std::string& bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

struct Field {
  uint64_t number, wire_type, varint = 0;
  std::string bytes;  // length-delimited payload or the raw little-endian fixed bytes
};
std::vector<Field> fields_of(const std::string& message) {
  std::vector<Field> fields;
  size_t at = 0;
  auto varint = [&] {
    uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(message.at(at++));
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  while (at < message.size()) {
    const uint64_t key = varint();
    Field f{key >> 3, key & 7, 0, {}};
    if (f.wire_type == 0)
      f.varint = varint();
    else if (f.wire_type == 1)
      f.bytes = message.substr(at, 8), at += 8;
    else if (f.wire_type == 5)
      f.bytes = message.substr(at, 4), at += 4;
    else if (f.wire_type == 2) {
      const uint64_t n = varint();
      f.bytes = message.substr(at, n);
      at += n;
    } else
      ADD_FAILURE() << "unexpected wire type " << f.wire_type;
    EXPECT_LE(at, message.size());
    fields.push_back(f);
  }
  return fields;
}

struct Event {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::vector<std::pair<std::string, float>> values;
  int session_status = -1;  // -1: no session_log
};

Event decode_event(const std::string& bytes) {
  Event e;
  for (const Field& f : fields_of(bytes)) {
    if (f.number == 1) {  // wall_time, double
      EXPECT_EQ(f.wire_type, 1u);
      uint64_t bits = little_endian(f.bytes, 0, 8);
      std::memcpy(&e.wall_time, &bits, 8);
    } else if (f.number == 2) {  // step, int64
      EXPECT_EQ(f.wire_type, 0u);
      e.step = static_cast<int64_t>(f.varint);
    } else if (f.number == 3) {  // file_version
      e.file_version = f.bytes;
    } else if (f.number == 5) {  // summary
      for (const Field& value : fields_of(f.bytes)) {
        EXPECT_EQ(value.number, 1u);  // Summary.value
        std::string tag;
        float simple = 0;
        for (const Field& vf : fields_of(value.bytes)) {
          if (vf.number == 1)
            tag = vf.bytes;
          else if (vf.number == 2) {  // simple_value, float
            EXPECT_EQ(vf.wire_type, 5u);
            uint32_t bits = static_cast<uint32_t>(little_endian(vf.bytes, 0, 4));
            std::memcpy(&simple, &bits, 4);
          } else
            ADD_FAILURE() << "unexpected Summary.Value field " << vf.number;
        }
        e.values.emplace_back(tag, simple);
      }
    } else if (f.number == 7) {  // session_log
      for (const Field& sf : fields_of(f.bytes))
        if (sf.number == 1) e.session_status = static_cast<int>(sf.varint);
    } else {
      ADD_FAILURE() << "unexpected Event field " << f.number;
    }
  }
  return e;
}

std::vector<Event> read_events(const fs::path& path) {
  const std::string bytes = slurp(path);
  std::vector<Event> events;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_GE(bytes.size() - at, 16u) << path << ": truncated record at byte " << at;
    if (bytes.size() - at < 16) break;
    const uint64_t length = little_endian(bytes, at, 8);
    EXPECT_EQ(little_endian(bytes, at + 8, 4), masked(bitwise_crc32c(bytes.substr(at, 8)))) << "length CRC at " << at;
    const std::string data = bytes.substr(at + 12, length);
    EXPECT_EQ(data.size(), length);
    EXPECT_EQ(little_endian(bytes, at + 12 + length, 4), masked(bitwise_crc32c(data))) << "data CRC at " << at;
    events.push_back(decode_event(data));
    at += 16 + length;
  }
  return events;
}

std::vector<fs::path> events_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // TensorBoard's reading order
  return files;
}

// All scalar events of a run (split folder), in TensorBoard's reading order.
std::vector<Event> scalar_events(const fs::path& split_dir) {
  std::vector<Event> out;
  for (const auto& file : events_files(split_dir))
    for (Event& e : read_events(file))
      if (!e.values.empty()) out.push_back(e);
  return out;
}

std::vector<int64_t> steps_of(const std::vector<Event>& events) {
  std::vector<int64_t> steps;
  for (const Event& e : events) steps.push_back(e.step);
  return steps;
}

// ---- tests ---------------------------------------------------------------------

TEST(Crc32c, MatchesTheCheckValueAndTheBitwiseDefinition) {
  EXPECT_EQ(csan::crc32c(std::string_view("123456789")), 0xE3069283u);  // CRC-32C's published check value
  const std::string bytes = "brain.Event:2 and some more bytes \x01\xff";
  EXPECT_EQ(csan::crc32c(bytes), bitwise_crc32c(bytes));
  EXPECT_EQ(csan::mask_crc32c(0x12345678u), masked(0x12345678u));
}

TEST(TensorboardWriter, WritesOneRunPerSplitWithFramedEvents) {
  const fs::path dir = fresh_dir("layout") / "tb";  // created by the writer
  const double before = now();
  {
    csan::TensorboardWriter writer(dir.string());
    writer.add_scalars("train_inner", 10, {{"loss", 7.25}, {"nll_loss", 7.0}, {"ppl", 128.0}, {"lr", 0.0005}});
    writer.add_scalars("valid", 10, {{"loss", 6.5}, {"bleu", 12.34}});
    writer.add_scalars("train_inner", 20, {{"loss", 6.125}, {"gnorm", 1.5}});
  }
  const double after = now();
  ASSERT_EQ(events_files(dir).size(), 2u);  // train_inner/ and valid/, nothing else
  for (const char* split : {"train_inner", "valid"}) {
    const auto files = events_files(dir / split);
    ASSERT_EQ(files.size(), 1u) << split;
    EXPECT_EQ(files[0].filename().string().rfind("events.out.tfevents.", 0), 0u) << files[0];
    const auto events = read_events(files[0]);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events[0].file_version, "brain.Event:2");
    EXPECT_TRUE(events[0].values.empty());
    for (const Event& e : events) {
      EXPECT_GE(e.wall_time, before - 1);
      EXPECT_LE(e.wall_time, after + 1);
      EXPECT_EQ(e.session_status, -1);  // a fresh run announces no restart
    }
  }
  const auto train = read_events(events_files(dir / "train_inner")[0]);
  ASSERT_EQ(train.size(), 3u);
  EXPECT_EQ(train[1].step, 10);
  ASSERT_EQ(train[1].values.size(), 4u);
  EXPECT_EQ(train[1].values[0], std::make_pair(std::string("loss"), 7.25f));
  EXPECT_EQ(train[1].values[3].first, "lr");
  EXPECT_FLOAT_EQ(train[1].values[3].second, 0.0005f);
  EXPECT_EQ(train[2].step, 20);
  EXPECT_EQ(train[2].values[1], std::make_pair(std::string("gnorm"), 1.5f));
  const auto valid = read_events(events_files(dir / "valid")[0]);
  ASSERT_EQ(valid.size(), 2u);
  EXPECT_EQ(valid[1].values[1].first, "bleu");
  EXPECT_FLOAT_EQ(valid[1].values[1].second, 12.34f);
}

TEST(TensorboardWriter, EachEventIsOnDiskOnceAddScalarsReturns) {
  const fs::path dir = fresh_dir("flush");
  csan::TensorboardWriter writer(dir.string());
  writer.add_scalars("train", 1, {{"loss", 1.0}});
  writer.add_scalars("train", 2, {{"loss", 0.5}});
  EXPECT_EQ(steps_of(scalar_events(dir / "train")), (std::vector<int64_t>{1, 2}));  // writer still open
}

TEST(TensorboardWriter, ResumeDropsEventsLoggedAfterTheCheckpointAndNeverDuplicatesSteps) {
  const fs::path dir = fresh_dir("resume");
  {  // the interrupted run: checkpoint at update 20, killed after logging update 40
    csan::TensorboardWriter writer(dir.string());
    for (int step : {10, 20, 30, 40}) writer.add_scalars("train_inner", step, {{"loss", 10.0 - step / 10}});
    writer.add_scalars("valid", 20, {{"loss", 8.0}});
    writer.add_scalars("valid", 21, {{"loss", 7.5}});  // the first step after the checkpoint
    writer.add_scalars("valid", 40, {{"loss", 7.0}});  // never logged again by the resumed run
  }
  const auto old_train_file = events_files(dir / "train_inner").at(0);
  {
    csan::TensorboardWriter writer(dir.string(), /*resume_step=*/20);
    EXPECT_EQ(steps_of(scalar_events(dir / "train_inner")), (std::vector<int64_t>{10, 20}));
    EXPECT_EQ(steps_of(scalar_events(dir / "valid")), (std::vector<int64_t>{20}));
    writer.add_scalars("train_inner", 30, {{"loss", 6.5}});
    writer.add_scalars("train_inner", 40, {{"loss", 6.0}});
  }
  const auto files = events_files(dir / "train_inner");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], old_train_file);  // the new file sorts after the old one
  const auto resumed = read_events(files[1]);
  ASSERT_GE(resumed.size(), 2u);
  EXPECT_EQ(resumed[0].file_version, "brain.Event:2");
  EXPECT_EQ(resumed[1].session_status, 1);  // SessionLog START ...
  EXPECT_EQ(resumed[1].step, 21);           // ... purging steps >= 21 in a TensorBoard that saw them
  const auto train = scalar_events(dir / "train_inner");
  EXPECT_EQ(steps_of(train), (std::vector<int64_t>{10, 20, 30, 40}));
  EXPECT_FLOAT_EQ(train[2].values[0].second, 6.5f);  // the resumed run's value, not the stale one
  EXPECT_EQ(steps_of(scalar_events(dir / "valid")), (std::vector<int64_t>{20}));
}

TEST(TensorboardWriter, WithoutResumeExistingFilesAreLeftAlone) {
  const fs::path dir = fresh_dir("keep");
  { csan::TensorboardWriter(dir.string()).add_scalars("train", 5, {{"loss", 1.0}}); }
  const auto file = events_files(dir / "train").at(0);
  const std::string before = slurp(file);
  { csan::TensorboardWriter(dir.string()).add_scalars("train", 5, {{"loss", 2.0}}); }
  EXPECT_EQ(slurp(file), before);
  EXPECT_EQ(events_files(dir / "train").size(), 2u);
}

TEST(TensorboardWriter, ResumeDropsAPartialRecordLeftByACrash) {
  const fs::path dir = fresh_dir("partial");
  { csan::TensorboardWriter(dir.string()).add_scalars("train", 5, {{"loss", 1.0}}); }
  const auto file = events_files(dir / "train").at(0);
  const std::string complete = slurp(file);
  { std::ofstream(file, std::ios::app | std::ios::binary) << complete.substr(0, 20); }  // half a record
  EXPECT_EQ(csan::truncate_tensorboard_events(dir.string(), 100), 0u);
  EXPECT_EQ(slurp(file), complete);
}

TEST(TensorboardWriter, ResumeOnACorruptFileNamesTheFileAndByte) {
  const fs::path dir = fresh_dir("corrupt");
  {
    csan::TensorboardWriter writer(dir.string());
    writer.add_scalars("train", 5, {{"loss", 1.0}});
    writer.add_scalars("train", 6, {{"loss", 1.0}});
  }
  const auto file = events_files(dir / "train").at(0);
  std::string bytes = slurp(file);
  const std::string intact = bytes;
  bytes[bytes.size() - 6] ^= 0x01;  // inside the last record's data
  csan::write_file_atomically(file.string(), bytes);
  try {
    csan::TensorboardWriter writer(dir.string(), 5);
    FAIL() << "a corrupt events file was accepted";
  } catch (const csan::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(file.string()), std::string::npos) << message;
    EXPECT_NE(message.find("byte "), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_EQ(slurp(file), bytes);  // nothing rewritten
}

TEST(TensorboardWriter, UnwritableLogDirIsAOneLineErrorNamingIt) {
  const fs::path dir = fresh_dir("unwritable");
  csan::write_file_atomically((dir / "file").string(), "x");
  const std::string log_dir = (dir / "file" / "tb").string();  // below a regular file: fails even for root
  try {
    csan::TensorboardWriter writer(log_dir);
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(log_dir + ": ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TensorboardWriter, SplitNamesArePlainFolderNames) {
  const fs::path dir = fresh_dir("split");
  csan::TensorboardWriter writer(dir.string());
  EXPECT_THROW(writer.add_scalars("../escape", 1, {{"loss", 1.0}}), csan::Error);
  EXPECT_THROW(writer.add_scalars("", 1, {{"loss", 1.0}}), csan::Error);
  EXPECT_FALSE(fs::exists(dir.parent_path() / "escape"));
}

// TensorBoard's own reader (tensorboard.backend.event_processing.event_accumulator), when
// its Python package is installed; Debian does not package it.
TEST(TensorboardWriter, TensorBoardsOwnReaderLoadsTheFiles) {
  if (std::system("python3 -c 'import tensorboard.backend.event_processing.event_accumulator' 2>/dev/null") != 0)
    GTEST_SKIP() << "TensorBoard's Python package is not installed (Debian does not package it; "
                    "pip install tensorboard to run this check)";
  const fs::path dir = fresh_dir("tensorboard");
  {
    csan::TensorboardWriter writer(dir.string());
    writer.add_scalars("valid", 10, {{"loss", 6.5}, {"bleu", 12.5}});
    writer.add_scalars("valid", 20, {{"loss", 6.0}, {"bleu", 14.0}});
  }
  { csan::TensorboardWriter(dir.string(), 10).add_scalars("valid", 20, {{"loss", 5.5}, {"bleu", 15.0}}); }
  const fs::path out = dir / "scalars.txt";
  const std::string command = "python3 " CSAN_SOURCE_DIR "/tests/unit/core/tensorboard_scalars.py " +
                              (dir / "valid").string() + " > " + out.string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(slurp(out), "bleu 10 12.5\nbleu 20 15\nloss 10 6.5\nloss 20 5.5\n");
}

}  // namespace
