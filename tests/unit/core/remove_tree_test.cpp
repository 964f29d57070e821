#include "toolkit/core/remove_tree.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("csan-remove-tree-" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  return dir;
}

TEST(RemoveTree, RemovesNestedDirectoriesButNotWhatALinkPointsTo) {
  const fs::path root = scratch("tree"), outside = scratch("outside");
  std::ofstream(outside / "keep.txt") << "kept";
  fs::create_directories(root / "a" / "b");
  std::ofstream(root / "a" / "b" / "file.txt") << "x";
  std::ofstream(root / "top.txt") << "y";
  fs::create_directory_symlink(outside, root / "a" / "link");
  EXPECT_TRUE(csan::remove_tree(root.string()));
  EXPECT_FALSE(fs::exists(fs::symlink_status(root)));
  EXPECT_TRUE(fs::exists(outside / "keep.txt"));  // the link went, not its target's files
}

TEST(RemoveTree, AFileOrNothingAtAll) {
  const fs::path file = scratch("file") / "one.txt";
  std::ofstream(file) << "z";
  EXPECT_TRUE(csan::remove_tree(file.string()));
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(csan::remove_tree((scratch("none") / "missing").string()));  // already gone
}

}  // namespace
