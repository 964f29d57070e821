// csan-score [--task NAME] [the task's options]: scores system outputs against references
// as the task does; the default task's is sacreBLEU 2.6.0's command line on local files
// (same option names, short forms, defaults, messages and exit codes). Option parsing
// only: each task declares its options and does the work
// (toolkit/commands/task_command.h).
#include <boost/program_options.hpp>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "toolkit/commands/task_command_line.h"
#include "toolkit/commands/task_command_set.h"
#include "toolkit/core/checked_output.h"
#include "toolkit/core/error.h"

namespace po = boost::program_options;

namespace {

constexpr const char* kProgram = "csan-score";
constexpr int kUsageError = 2;  // argparse's exit code for bad arguments

// sacreBLEU's multi-letter single-dash forms (argparse accepts them; Boost does not).
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> table{{"-i", "--input"},
                                                        {"-nr", "--num-refs"},
                                                        {"-e", "--encoding"},
                                                        {"-m", "--metrics"},
                                                        {"-sl", "--sentence-level"},
                                                        {"-s", "--smooth-method"},
                                                        {"-sv", "--smooth-value"},
                                                        {"-tok", "--tokenize"},
                                                        {"-lc", "--lowercase"},
                                                        {"-cc", "--chrf-char-order"},
                                                        {"-cw", "--chrf-word-order"},
                                                        {"-ci", "--confidence"},
                                                        {"-cin", "--confidence-n"},
                                                        {"-par", "--paired-ar"},
                                                        {"-pbs", "--paired-bs"},
                                                        {"-parn", "--paired-ar-n"},
                                                        {"-pbsn", "--paired-bs-n"},
                                                        {"-j", "--paired-jobs"},
                                                        {"-q", "--quiet"},
                                                        {"-sh", "--short"},
                                                        {"-b", "--score-only"},
                                                        {"-w", "--width"},
                                                        {"-nc", "--no-color"},
                                                        {"-f", "--format"},
                                                        {"-V", "--version"},
                                                        {"-h", "--help"}};
  return table;
}

// Rewrites "-tok zh", "-tok=zh" and "-w3" into the long forms.
std::vector<std::string> canonical_arguments(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') {
      out.push_back(arg);
      continue;
    }
    const std::size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    if (auto it = aliases().find(name); it != aliases().end()) {
      out.push_back(it->second + (equals == std::string::npos ? "" : arg.substr(equals)));
      continue;
    }
    if (auto it = aliases().find(arg.substr(0, 2)); it != aliases().end()) {  // "-w3"
      out.push_back(it->second);
      out.push_back(arg.substr(2));
      continue;
    }
    out.push_back(arg);  // a negative number or an unknown option: Boost decides
  }
  return out;
}

// argparse keeps the last occurrence of a repeated option (positional arguments add up).
void keep_last_occurrences(po::parsed_options& parsed) {
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < parsed.options.size(); ++i) last[parsed.options[i].string_key] = i;
  std::vector<po::option> kept;
  for (std::size_t i = 0; i < parsed.options.size(); ++i)
    if (parsed.options[i].position_key != -1 || last[parsed.options[i].string_key] == i)
      kept.push_back(parsed.options[i]);
  parsed.options = kept;
}

// As argparse: the usage line, then the error.
int usage_error(const std::string& usage, const std::string& message) {
  std::cerr << usage << "\n" << kProgram << ": error: " << message << "\n";
  return kUsageError;
}

int print(const std::string& text) {
  csan::CheckedOutput output;
  output.stream() << text;
  output.close();
  return 0;
}

int run(const std::vector<std::string>& args) {
  namespace commands = csan::commands;
  po::options_description own("csan-score [--task NAME] [the task's options]");
  own.add_options()("help", "-h: show this help message and exit")("version", "-V: print the version and exit");
  commands::add_task_option(own);
  const commands::TaskCommandSet tasks(&commands::TaskCommands::score);
  const std::string* usage = nullptr;
  try {
    // Boost guesses unambiguous abbreviations, as argparse does.
    const commands::TaskCommandLine line(args, own);
    if (line.own().count("help")) return print(commands::task_help(own, tasks.sections()));
    if (line.own().count("version")) return print("csan-score 2.6.0\n");
    const std::string task = line.own()["task"].as<std::string>();
    commands::TaskCommand& command = tasks.get(task);
    usage = &command.usage();
    const auto given = line.parse(command.options(), command.positional(), "--task " + task,
                                  tasks.sections_except(task), keep_last_occurrences);
    csan::CheckedOutput output;
    const int status = command.run(given, {std::cin, output.stream(), std::cerr});
    output.close();
    return status;
  } catch (const po::error& e) {
    return usage_error(usage ? *usage : tasks.get(commands::kDefaultTask).usage(), e.what());
  } catch (const commands::UsageError& e) {
    return usage_error(*usage, e.what());
  }
}

int main_body(int argc, char** argv) { return run(canonical_arguments(argc, argv)); }

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return csan::run_main(kProgram, main_body, argc, argv);
}
