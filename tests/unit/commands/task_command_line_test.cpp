// The command line of an executable whose options depend on a task
// (toolkit/commands/task_command_line.h): the own options are read before the task is
// known, the task's section is parsed with them, an option only another task has is
// refused naming it and the task, and every registered task has its part of
// csan-preprocess and csan-score, so that no executable names a task.
#include "toolkit/commands/task_command_line.h"

#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/error_message.h"
#include "toolkit/commands/task_command.h"
#include "toolkit/commands/task_command_set.h"
#include "toolkit/core/error.h"

namespace po = boost::program_options;
using csan::testing::message_of;

namespace csan::commands {
namespace {

struct Sections {
  po::options_description own{"own"}, beams{"beams"}, tags{"tags"};
  int64_t beam = 0, threads = 0;
  std::string input, column;
  Sections() {
    own.add_options()("help,h", "help")("task", po::value<std::string>()->default_value("beams"), "task")(
        "threads", po::value(&threads)->default_value(1), "threads");
    beams.add_options()("beam,b", po::value(&beam)->default_value(5), "beam")("input", po::value(&input), "text");
    tags.add_options()("tag-column", po::value(&column)->default_value("upos"), "column")("input", po::value(&input),
                                                                                          "CoNLL-U");
  }
};

TEST(TaskCommandLine, ReadsTheOwnOptionsFirstAndThenTheTasksSection) {
  Sections s;
  const TaskCommandLine line({"--task", "tags", "--tag-column", "xpos", "--input", "a.conllu", "--threads", "3"},
                             s.own);
  EXPECT_EQ(line.own()["task"].as<std::string>(), "tags");
  const auto given = line.parse(s.tags, {}, "--task tags", {&s.beams});
  EXPECT_EQ(s.column, "xpos");
  EXPECT_EQ(s.input, "a.conllu");
  EXPECT_EQ(s.threads, 3);
  EXPECT_FALSE(given["tag-column"].defaulted());
  EXPECT_EQ(s.beam, 0) << "another task's section is not stored";
}

TEST(TaskCommandLine, AnOptionOfAnotherTaskIsRefusedNamingItAndTheTask) {
  Sections s;
  const TaskCommandLine line({"--task", "tags", "--beam", "4"}, s.own);
  EXPECT_EQ(message_of([&] { line.parse(s.tags, {}, "--task tags", {&s.beams}); }),
            "--beam: not an option of --task tags");
  // By its short name too, and the refusal names the long one.
  const TaskCommandLine short_form({"-b", "4"}, s.own);
  EXPECT_EQ(message_of([&] { short_form.parse(s.tags, {}, "task tags (x.pt)", {&s.beams}); }),
            "--beam: not an option of task tags (x.pt)");
  // An option shared by both sections is the chosen task's.
  const TaskCommandLine shared({"--input", "x"}, s.own);
  EXPECT_NO_THROW(shared.parse(s.tags, {}, "--task tags", {&s.beams}));
  // An option no task has stays Boost's error.
  const TaskCommandLine unknown({"--no-such-option"}, s.own);
  EXPECT_THROW(unknown.parse(s.tags, {}, "--task tags", {&s.beams}), po::unknown_option);
}

TEST(TaskCommandLine, ChecksUnknownOptionsWhenTheTaskCannotBeKnown) {
  Sections s;
  EXPECT_NO_THROW(
      TaskCommandLine({"--beam", "3", "--tag-column", "x", "-b", "2"}, s.own).check_known({&s.beams, &s.tags}));
  EXPECT_NO_THROW(TaskCommandLine({"--tag", "x"}, s.own).check_known({&s.beams, &s.tags})) << "an abbreviation";
  try {
    TaskCommandLine({"--beam", "3", "--no-such-option"}, s.own).check_known({&s.beams, &s.tags});
    ADD_FAILURE() << "an option no task has is refused";
  } catch (const po::unknown_option& e) {
    EXPECT_EQ(std::string(e.what()), "unrecognised option '--no-such-option'");
  }
}

TEST(TaskCommandLine, HelpShowsTheOwnOptionsAndEveryTasksSection) {
  Sections s;
  const std::string help = task_help(s.own, {&s.beams, &s.tags});
  for (const char* text : {"own:", "--threads", "beams:", "--beam", "tags:", "--tag-column"})
    EXPECT_NE(help.find(text), std::string::npos) << text << " in\n" << help;
}

TEST(TaskCommands, EveryTaskHasItsPartOfPreprocessAndScore) {
  ASSERT_TRUE(task_commands().contains(kDefaultTask));
  for (const auto& name : task_commands().names()) {
    const auto& task = task_commands().get(name);
    EXPECT_FALSE(task.doc.empty()) << name;
    ASSERT_TRUE(task.preprocess && task.score) << name;
    EXPECT_FALSE(task.preprocess()->options().options().empty()) << name;
    EXPECT_NE(task.score()->usage().find("csan-score"), std::string::npos) << name;
  }
  for (auto which : {&TaskCommands::preprocess, &TaskCommands::score}) {
    const TaskCommandSet set(which);
    EXPECT_EQ(set.sections().size(), task_commands().names().size());
    EXPECT_EQ(message_of([&] { set.get("parsing"); }), "unknown task 'parsing'; known: " + task_commands().known());
  }
}

// Each *_commands.cpp is linked by its anchor (CsanComponents.cmake): every task a
// Registrar there registers is in the registry. (The torch registries' files are checked
// in test_models; this torch-free one here, with the rest of toolkit/commands/.)
TEST(TaskCommands, EveryRegisteringFileIsLinked) {
  const std::regex registrar(R"re(Registrar<TaskCommands>\s+\w+\(\s*task_commands\(\),\s*"([^"]+)")re");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CSAN_SOURCE_DIR) + "/toolkit/commands")) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = "_commands.cpp";
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), std::string::npos, suffix) != 0)
      continue;
    ++files;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(text.find("CSAN_REGISTRATION_ANCHOR(" + name.substr(0, name.size() - 4) + ")"), std::string::npos)
        << name << " lacks its anchor";
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, registrar)) << name << " registers nothing";
    EXPECT_TRUE(task_commands().contains(m[1])) << name << " registers '" << m[1] << "', which is missing";
  }
  EXPECT_EQ(files, static_cast<int>(task_commands().names().size()));
}

// The executables dispatch on the registries: none of them names a task.
TEST(TaskCommands, NoExecutableNamesATask) {
  for (const auto& entry : std::filesystem::directory_iterator(std::string(CSAN_SOURCE_DIR) + "/cli")) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    for (const auto& name : task_commands().names())
      EXPECT_EQ(text.find(name), std::string::npos) << entry.path() << " names task '" << name << "'";
  }
}

}  // namespace
}  // namespace csan::commands
