#include "toolkit/commands/task_command_line.h"

#include <sstream>

#include "toolkit/core/error.h"

namespace po = boost::program_options;

namespace csan::commands {

namespace {

// The section of `others` that declares the option an unknown_option names ("--beam"
// or "-b"), or nullptr.
const po::option_description* declared_elsewhere(const std::string& name,
                                                 const std::vector<const po::options_description*>& others) {
  const bool is_long = name.rfind("--", 0) == 0;
  const std::string key = is_long ? name.substr(2) : name;
  for (const auto* section : others)
    if (const auto* option = section->find_nothrow(key, /*approx=*/false)) return option;
  return nullptr;
}

}  // namespace

TaskCommandLine::TaskCommandLine(std::vector<std::string> args, const po::options_description& own)
    : args_(std::move(args)), own_(own) {
  const po::parsed_options parsed = po::command_line_parser(args_).options(own_).allow_unregistered().run();
  po::store(parsed, own_values_);
  for (const auto& option : parsed.options)
    if (option.unregistered) skipped_.push_back(option);
}

void TaskCommandLine::check_known(const std::vector<const po::options_description*>& sections) const {
  for (const auto& option : skipped_) {
    bool known = false;
    for (const auto* section : sections) {
      try {
        known = known || section->find_nothrow(option.string_key, /*approx=*/true) != nullptr;
      } catch (const po::ambiguous_option&) {
        known = true;  // an abbreviation of several: the task's own section decides
      }
    }
    if (!known)
      throw po::unknown_option(option.original_tokens.empty() ? option.string_key : option.original_tokens[0]);
  }
}

po::variables_map TaskCommandLine::parse(const po::options_description& section,
                                         const po::positional_options_description& positional,
                                         const std::string& chosen,
                                         const std::vector<const po::options_description*>& others,
                                         const std::function<void(po::parsed_options&)>& adjust) const {
  po::options_description all;
  all.add(own_).add(section);
  po::variables_map values;
  try {
    po::parsed_options parsed = po::command_line_parser(args_).options(all).positional(positional).run();
    if (adjust) adjust(parsed);
    po::store(parsed, values);
  } catch (const po::unknown_option& e) {
    if (const auto* option = declared_elsewhere(e.get_option_name(), others))
      throw Error("--" + option->long_name() + ": not an option of " + chosen, ErrorKind::bad_option);
    throw;
  }
  po::notify(values);
  return values;
}

std::string task_help(const po::options_description& own, const std::vector<const po::options_description*>& sections) {
  std::ostringstream text;
  text << own << "\n";
  for (const auto* section : sections) text << *section << "\n";
  return text.str();
}

}  // namespace csan::commands
