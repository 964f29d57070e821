// The command line of an executable whose options depend on a task: csan-preprocess and
// csan-score (the task of --task) and csan-generate (the task of its checkpoint). It has
// the executable's own options (--help, --task or --path, ...) and one section per
// task. The own options are read first, everything else skipped, since the task, and
// with it the meaning of the other options, is not known yet; then the own options and
// the chosen task's section are parsed together. An option that only other tasks have
// is refused in one line naming it and the task, whether the task's section would have
// ignored it or not. (This file knows no task: the tasks' commands of csan-preprocess and
// csan-score, chosen by --task, are in task_command_set.h; csan-generate's in the tasks.)
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

namespace csan::commands {

class TaskCommandLine {
 public:
  // Throws boost::program_options::error for a malformed own option.
  TaskCommandLine(std::vector<std::string> args, const boost::program_options::options_description& own);

  const boost::program_options::variables_map& own() const { return own_values_; }

  // For a command line whose task cannot be known (csan-generate without --path): throws
  // boost::program_options::unknown_option for an option that neither the own options
  // nor any of `sections` has.
  void check_known(const std::vector<const boost::program_options::options_description*>& sections) const;

  // The own options and `section` (with its positional arguments), stored and notified.
  // An option that `section` lacks but one of `others` has is a csan::Error "--beam: not
  // an option of CHOSEN", where `chosen` says how the task was chosen ("--task tagging",
  // "task tagging (x.pt)"). Other bad options throw boost::program_options::error.
  // `adjust` may rewrite the parsed options before they are stored.
  boost::program_options::variables_map parse(
      const boost::program_options::options_description& section,
      const boost::program_options::positional_options_description& positional, const std::string& chosen,
      const std::vector<const boost::program_options::options_description*>& others,
      const std::function<void(boost::program_options::parsed_options&)>& adjust = {}) const;

 private:
  std::vector<std::string> args_;
  const boost::program_options::options_description& own_;
  boost::program_options::variables_map own_values_;
  std::vector<boost::program_options::option> skipped_;  // the options the own ones lack
};

// --help: the own options, then every task's section.
std::string task_help(const boost::program_options::options_description& own,
                      const std::vector<const boost::program_options::options_description*>& sections);

}  // namespace csan::commands
