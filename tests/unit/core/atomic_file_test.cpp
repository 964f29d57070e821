#include "toolkit/core/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "toolkit/core/error.h"
#include "toolkit/core/temporary_paths.h"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("csan_core_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Each behaviour holds for both ways of writing (straight_to_disk: direct_file_writer.h).
class AtomicFileWrites : public ::testing::TestWithParam<csan::FileWrites> {
 protected:
  fs::path dir(const std::string& name) const {
    return fresh_dir(name + (GetParam() == csan::FileWrites::straight_to_disk ? "_direct" : "_cached"));
  }
};

TEST_P(AtomicFileWrites, UncommittedWriteLeavesOldContents) {
  fs::path d = dir("uncommitted");
  std::string path = (d / "f.txt").string();
  csan::write_file_atomically(path, "old");
  {
    csan::AtomicFile f(path, GetParam());
    f.write("new contents");
  }  // destroyed without commit: as if the process died mid-write
  EXPECT_EQ(csan::read_file(path), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator{}), 1);
}

TEST_P(AtomicFileWrites, CommitReplaces) {
  fs::path d = dir("commit");
  std::string path = (d / "f.txt").string();
  csan::write_file_atomically(path, "old");
  csan::AtomicFile f(path, GetParam());
  f.write("new");
  f.commit();
  EXPECT_EQ(csan::read_file(path), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator{}), 1);
}

TEST_P(AtomicFileWrites, OverwriteReplacesAReservedFieldAndWritingGoesOnAtTheEnd) {
  fs::path d = dir("overwrite");
  std::string path = (d / "f.txt").string();
  csan::AtomicFile f(path, GetParam());
  f.write("sum=????;");
  f.write("body");
  f.overwrite(4, "1234", 4);
  f.write(";end");
  f.commit();
  EXPECT_EQ(csan::read_file(path), "sum=1234;body;end");
}

TEST_P(AtomicFileWrites, OverwritePastWhatWasWrittenIsRefused) {
  fs::path d = dir("overwrite_past");
  std::string path = (d / "f.txt").string();
  csan::AtomicFile f(path, GetParam());
  f.write("abc");
  EXPECT_THROW(f.overwrite(2, "xy", 2), csan::Error);
  EXPECT_THROW(f.overwrite(4, "", 0), csan::Error);
  f.overwrite(1, "xy", 2);
  f.commit();
  EXPECT_EQ(csan::read_file(path), "axy");
}

TEST_P(AtomicFileWrites, UnwritableDirectoryNamesPath) {
  try {
    csan::AtomicFile f("/nonexistent-dir/x.txt", GetParam());
    FAIL() << "expected an error";
  } catch (const csan::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.txt"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(BothWays, AtomicFileWrites,
                         ::testing::Values(csan::FileWrites::through_page_cache, csan::FileWrites::straight_to_disk),
                         [](const auto& info) {
                           return info.param == csan::FileWrites::straight_to_disk ? "StraightToDisk"
                                                                                   : "ThroughPageCache";
                         });

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

TEST(ReadFile, DirectoryIsAnErrorNotAnEmptyFile) {
  fs::path dir = fresh_dir("read_dir");
  try {
    csan::read_file(dir.string());
    FAIL() << "a directory read as a file";
  } catch (const csan::Error& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + ": is a directory, expected a file");
  }
}

pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(StaleTemporaries, OnlyThoseOfDeadProcessesAreRemoved) {
  fs::path dir = fresh_dir("stale");
  const std::string dest = (dir / "out").string();
  const std::string dead = dest + ".tmp." + std::to_string(dead_pid()) + ".4";
  const std::string live = dest + ".tmp." + std::to_string(::getpid()) + ".0";
  const std::string unrelated = dest + ".tmp.notapid.0";
  const std::string other_name = (dir / "outer").string() + ".tmp." + std::to_string(dead_pid()) + ".0";
  for (const auto& path : {dead, live, unrelated, other_name}) csan::write_file_atomically(path, "x");
  EXPECT_EQ(csan::remove_stale_temporaries(dest), std::vector<std::string>{dead});
  EXPECT_FALSE(fs::exists(dead));
  for (const auto& path : {live, unrelated, other_name}) EXPECT_TRUE(fs::exists(path)) << path;
}

// A commit killed between moving the old directory aside and putting the new one in
// place leaves the only copy under DEST.old.tmp.PID.N: it comes back, it is not deleted.
TEST(StaleTemporaries, OldCopyOfADeadCommitIsRestored) {
  fs::path dir = fresh_dir("stale_old");
  const std::string dest = (dir / "out").string();
  const std::string old = dest + ".old.tmp." + std::to_string(dead_pid()) + ".1";
  fs::create_directories(old);
  csan::write_file_atomically(old + "/keep", "1");
  auto done = csan::remove_stale_temporaries(dest);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(csan::read_file(dest + "/keep"), "1");
  EXPECT_FALSE(fs::exists(old));
  // With the new directory in place, a leftover old copy is only removed.
  fs::create_directories(old);
  EXPECT_EQ(csan::remove_stale_temporaries(dest), std::vector<std::string>{old});
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(dest + "/keep"));
}

// The interrupt cleanup runs in a child process: it ends the process.
TEST(InterruptCleanup, SignalRemovesTemporariesAndExitsWith128PlusSignal) {
  fs::path dir = fresh_dir("interrupt");
  const std::string file = (dir / "f.txt").string(), staged = (dir / "d").string();
  csan::write_file_atomically(file, "old");
  for (int signal : {SIGTERM, SIGINT}) {
    const pid_t child = ::fork();
    if (child == 0) {
      csan::remove_temporaries_on_interrupt("test");
      csan::AtomicFile f(file);
      f.write("new, half written");
      csan::AtomicDirectory d(staged);
      csan::write_file_atomically(d.staging() + "/x", "1");
      ::kill(::getpid(), signal);
      ::sleep(30);  // the watcher thread exits the process first
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
    // Only the committed file is left, unchanged.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1);
    EXPECT_EQ(csan::read_file(file), "old");
  }
}

}  // namespace
