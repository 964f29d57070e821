#include "toolkit/core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "toolkit/core/error.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("csan_core_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicFile, UncommittedWriteLeavesOldContents) {
  fs::path dir = fresh_dir("uncommitted");
  std::string path = (dir / "f.txt").string();
  csan::write_file_atomically(path, "old");
  {
    csan::AtomicFile f(path);
    f.write("new contents");
  }  // destroyed without commit: as if the process died mid-write
  EXPECT_EQ(csan::read_file(path), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
}

TEST(AtomicFile, CommitReplaces) {
  fs::path dir = fresh_dir("commit");
  std::string path = (dir / "f.txt").string();
  csan::write_file_atomically(path, "old");
  csan::write_file_atomically(path, "new");
  EXPECT_EQ(csan::read_file(path), "new");
}

TEST(AtomicFile, UnwritableDirectoryNamesPath) {
  try {
    csan::AtomicFile f("/nonexistent-dir/x.txt");
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.txt"), std::string::npos);
  }
}

TEST(AtomicDirectory, AbandonedBuildLeavesDestinationUntouched) {
  fs::path dir = fresh_dir("dir");
  fs::path dest = dir / "out";
  fs::create_directories(dest);
  csan::write_file_atomically((dest / "keep").string(), "1");
  {
    csan::AtomicDirectory d(dest.string());
    csan::write_file_atomically(d.staging() + "/partial", "x");
  }
  EXPECT_TRUE(fs::exists(dest / "keep"));
  EXPECT_FALSE(fs::exists(dest / "partial"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
  {
    csan::AtomicDirectory d(dest.string());
    csan::write_file_atomically(d.staging() + "/done", "y");
    d.commit();
  }
  EXPECT_FALSE(fs::exists(dest / "keep"));
  EXPECT_EQ(csan::read_file((dest / "done").string()), "y");
}

}  // namespace
