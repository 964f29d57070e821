// The bad-input probe of issue 18, recorded: each case is a shell command run in a fresh
// folder holding the same input files, with the exit code it must end with, a piece of
// the one line it must print, and the check that it left no file behind and changed
// none (the folder afterwards holds exactly the inputs, byte for byte, plus the files the
// case says it creates).
//
// The commands use $SCORE, $PREPROCESS, $TRAIN and $AVERAGE for the executables.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "cli_runner.h"
#include "toolkit/core/atomic_file.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

struct ProbeCase {
  std::string name;
  std::string command;
  int exit_code;
  std::string stderr_has;                 // empty: stderr must be empty
  std::string stdout_has = "";            // checked when not empty
  std::vector<std::string> creates = {};  // files the command may leave (besides the inputs)
  std::string stdout_lacks = "";
};

void PrintTo(const ProbeCase& c, std::ostream* os) { *os << c.name; }

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// The inputs every case folder starts with.
void write_inputs(const fs::path& dir) {
  write(dir / "ref.txt", "the cat sat on the mat\na dog barked twice\nit rained all day long\n");
  write(dir / "hyp.txt", "the cat sat on a mat\na dog barked\nit rained all day\n");
  write(dir / "hyp2.txt", "a cat sat on the mat\nthe dog barked twice\nrain fell all day long\n");
  fs::create_directories(dir / "adir");
  write(dir / "adir" / "inside.txt", "x\n");
  // csan-score's sentence-level output of these is far larger than a pipe's buffer.
  std::string many_refs, many_hyps;
  for (int i = 0; i < 20000; ++i) {
    many_refs += "line " + std::to_string(i) + " of the reference text\n";
    many_hyps += "line " + std::to_string(i) + " of the system output\n";
  }
  write(dir / "many_ref.txt", many_refs);
  write(dir / "many_hyp.txt", many_hyps);
  // One 50k-word line, and the same with every 1000th word replaced: TER 50/50000.
  std::string long_ref, long_hyp;
  for (int i = 0; i < 50000; ++i) {
    long_ref += (i ? " w" : "w") + std::to_string(i);
    long_hyp += (i ? " " : "") + std::string(i % 1000 == 0 ? "x" : "w") + std::to_string(i);
  }
  write(dir / "long_ref.txt", long_ref + "\n");
  write(dir / "long_hyp.txt", long_hyp + "\n");
  // A tiny parallel corpus, an empty one and one with only blank source lines.
  std::string src, tgt;
  for (int i = 0; i < 40; ++i) {
    src += "ein kleiner satz nummer " + std::to_string(i % 7) + "\n";
    tgt += "a small sentence number " + std::to_string(i % 7) + "\n";
  }
  write(dir / "corpus" / "train.src", src);
  write(dir / "corpus" / "train.tgt", tgt);
  write(dir / "corpus" / "empty.src", "");
  write(dir / "corpus" / "empty.tgt", "");
  write(dir / "corpus" / "blank.src", "\n \n\t\n");
  write(dir / "corpus" / "blank.tgt", "a\nb\nc\n");
  // Recipes, and files in the place of checkpoints (refused before they are read).
  write(dir / "empty.yaml", "");
  write(dir / "twice.yaml", "model:\n  arch: transformer_tiny\nmodel:\n  dropout: 0.1\n");
  write(dir / "tiny.yaml", "model:\n  arch: transformer_tiny\n");
  write(dir / "a.pt", "checkpoint a");
  write(dir / "b.pt", "checkpoint b");
  write(dir / "ck" / "checkpoint1.pt", "epoch 1");
  write(dir / "ck" / "checkpoint2.pt", "epoch 2");
}

std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = fs::relative(entry.path(), dir).string();
    if (entry.is_symlink())
      files[name] = "symlink";
    else if (entry.is_directory())
      files[name] = "directory";
    else
      files[name] = csan::read_file(entry.path().string());
  }
  return files;
}

const std::string kPreprocess = "$PREPROCESS -s src -t tgt --trainpref corpus/train --destdir out --spm-vocab-size 30 ";
const std::string kNoSpace = "stdout: write failed: No space left on device";

const std::vector<ProbeCase>& cases() {
  static const std::vector<ProbeCase> all{
      // Item 4: a failed write to stdout is an error; a closed pipe ends quietly (141,
      // what a shell reports for `cat` under `| head`), with SIGPIPE ignored or not.
      {"score_stdout_full", "$SCORE ref.txt -i hyp.txt > /dev/full", 1, "csan-score: error: " + kNoSpace},
      {"score_text_stdout_full", "$SCORE ref.txt -i hyp.txt -m bleu chrf ter -f text > /dev/full", 1, kNoSpace},
      {"score_help_stdout_full", "$SCORE --help > /dev/full", 1, kNoSpace},
      {"score_closed_pipe",
       "$SCORE many_ref.txt -i many_hyp.txt -sl -m chrf | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}", 141, ""},
      {"score_closed_pipe_sigpipe_ignored",
       "trap '' PIPE; $SCORE many_ref.txt -i many_hyp.txt -sl -m chrf | head -c 10 > /dev/null; exit ${PIPESTATUS[0]}",
       141, ""},
      // Item 10: TER of one 50k-word line in linear memory (the full DP took 12 GB).
      {"score_ter_50k_words_in_1GB", "ulimit -v 1000000; $SCORE long_ref.txt -i long_hyp.txt -m ter -b", 0, "",
       "0.1\n"},
      // Item 11, csan-score: what sacreBLEU 2.6.0 accepts keeps its meaning (a count of 0
      // or less is the default; -cin 1 or less means no interval; beta -1 squares to 1)...
      {"score_pbsn_zero_is_the_default", "$SCORE ref.txt -i hyp.txt hyp2.txt -pbs -pbsn 0 -f text -q", 0, "",
       "bs:1000|"},
      {"score_pbsn_negative_is_the_default", "$SCORE ref.txt -i hyp.txt hyp2.txt -pbs -pbsn -5 -f text -q", 0, "",
       "with -5 resampling trials"},
      {"score_parn_zero_is_the_default", "$SCORE ref.txt -i hyp.txt hyp2.txt -par -parn 0 -f text -q", 0, "",
       "ar:10000|"},
      {"score_cin_zero_is_no_interval",
       "$SCORE ref.txt -i hyp.txt -ci -cin 0 -f text",
       0,
       "",
       "BLEU|nrefs:1|case",
       {},
       "bs:"},
      {"score_chrf_beta_negative", "$SCORE ref.txt -i hyp.txt -m chrf --chrf-beta -1 -f text", 0, "", "chrF-1|"},
      // ...what it crashes on is a one-line error naming the option.
      {"score_negative_jobs_in_paired_test", "$SCORE ref.txt -i hyp.txt hyp2.txt -pbs -j -3", 1, "--paired-jobs/-j"},
      {"score_too_many_resamples", "$SCORE ref.txt -i hyp.txt -ci -cin 2000000000", 1,
       "--confidence-n/-cin: at most 10000000"},
      // Item 12, csan-score: a directory is not an empty file.
      {"score_directory_as_reference", "$SCORE adir -i hyp.txt", 1,
       "csan-score: error: adir: is a directory, expected a file"},
      {"score_directory_as_system", "$SCORE ref.txt -i adir", 1, "adir: is a directory, expected a file"},
      {"score_directory_as_spm_model", "$SCORE ref.txt -i hyp.txt -tok spm --spm-model adir", 1,
       "adir: is a directory, expected a file"},
      // Item 11, csan-preprocess: negative counts name their option.
      {"preprocess_nwordssrc_negative", kPreprocess + "--nwordssrc -7", 1, "key 'nwordssrc': must be -1 (keep all)"},
      {"preprocess_nwordstgt_negative", kPreprocess + "--nwordstgt -3", 1, "key 'nwordstgt'"},
      {"preprocess_thresholdsrc_negative", kPreprocess + "--thresholdsrc -2", 1, "key 'thresholdsrc'"},
      {"preprocess_thresholdtgt_negative", kPreprocess + "--thresholdtgt -2", 1, "key 'thresholdtgt'"},
      {"preprocess_sentence_size_negative", kPreprocess + "--spm-input-sentence-size -4", 1,
       "key 'spm-input-sentence-size'"},
      {"preprocess_seed_negative", kPreprocess + "--spm-seed -1", 1, "key 'spm-seed'"},
      {"preprocess_min_len_names_min_len", kPreprocess + "--min-len -1", 1, "key 'min-len': must not be negative"},
      // Item 12, csan-preprocess: empty corpora name their files; no raw std::filesystem text.
      {"preprocess_empty_corpus", "$PREPROCESS -s src -t tgt --trainpref corpus/empty --destdir out", 1,
       "corpus/empty.src, corpus/empty.tgt: the train split has no lines"},
      {"preprocess_blank_corpus", "$PREPROCESS -s src -t tgt --trainpref corpus/blank --destdir out", 1,
       "corpus/blank.src: the train split has only empty lines"},
      {"preprocess_empty_valid_split", kPreprocess + "--validpref corpus/empty", 1, "the valid split has no lines"},
      {"preprocess_destdir_below_a_file",
       kPreprocess.substr(0, kPreprocess.find("--destdir")) + "--destdir ref.txt/sub", 1,
       "csan-preprocess: error: ref.txt"},
      // Item 11, recipes: an empty recipe and a repeated section are errors naming the file.
      {"train_empty_recipe", "$TRAIN empty.yaml --data corpus --save-dir save", 1, "empty.yaml: the recipe is empty"},
      {"train_section_given_twice", "$TRAIN twice.yaml --data corpus --save-dir save", 1,
       "twice.yaml:3: key 'model' is given twice (first at twice.yaml:1)"},
      // Item 12: a rate past float's range names its key (it overflowed inside LibTorch).
      {"train_lr_past_float_range", "$TRAIN tiny.yaml --data corpus --save-dir save --lr 1e300", 1,
       "key 'optimization.lr': 1e+300 is out of range [0, 3.402823466e+38]"},
      {"train_adam_eps_past_float_range",
       "$TRAIN tiny.yaml --data corpus --save-dir save --set optimizer.adam_eps=1e39", 1,
       "key 'optimizer.adam_eps': 1e+39 is out of range"},
      // Item 9: average-checkpoints never writes over one of its inputs.
      {"average_output_is_an_input", "$AVERAGE --inputs a.pt b.pt --output a.pt", 1,
       "--output a.pt is also one of the --inputs"},
      {"average_output_is_an_input_by_another_path", "$AVERAGE --inputs a.pt b.pt --output ./adir/../b.pt", 1,
       "is also one of the --inputs (b.pt)"},
      {"average_output_is_a_link_to_an_input",
       "ln -s a.pt link.pt; $AVERAGE --inputs a.pt b.pt --output link.pt",
       1,
       "is also one of the --inputs (a.pt)",
       "",
       {"link.pt"}},
      {"average_output_is_a_hard_link_to_an_input",
       "ln b.pt hard.pt; $AVERAGE --inputs a.pt b.pt --output hard.pt",
       1,
       "is also one of the --inputs (b.pt)",
       "",
       {"hard.pt"}},
      {"average_output_is_a_selected_checkpoint",
       "$AVERAGE --inputs ck --num-epoch-checkpoints 2 --output ck/checkpoint1.pt", 1, "is also one of the --inputs"},
      {"average_directory_as_input", "$AVERAGE --inputs adir b.pt --output avg.pt", 1,
       "adir: is a directory; give checkpoint files"},
      {"average_output_is_a_directory", "$AVERAGE --inputs a.pt b.pt --output adir", 1, "adir: is a directory"},
  };
  return all;
}

class Probe : public testing::TestWithParam<ProbeCase> {};

TEST_P(Probe, FailsCleanly) {
  const ProbeCase& c = GetParam();
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of address space: no `ulimit -v` can apply.
  if (c.command.find("ulimit -v") != std::string::npos) GTEST_SKIP() << "ulimit -v under AddressSanitizer";
#endif
  const fs::path dir = make_temp_dir("probe_" + c.name);
  write_inputs(dir);
  const auto before = snapshot(dir);
  auto r = run({"/bin/bash", "-c", c.command}, "",
               {"SCORE=" + bin("csan-score"), "PREPROCESS=" + bin("csan-preprocess"), "TRAIN=" + bin("csan-train"),
                "AVERAGE=" + tool("average-checkpoints")},
               dir.string());
  EXPECT_EQ(r.exit_code, c.exit_code) << r.err;
  if (c.stderr_has.empty()) {
    EXPECT_EQ(r.err, "");
  } else {
    EXPECT_NE(r.err.find(c.stderr_has), std::string::npos) << "expected '" << c.stderr_has << "' in: " << r.err;
    if (c.exit_code != 0) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
      EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
    }
  }
  if (!c.stdout_has.empty()) {
    EXPECT_NE(r.out.find(c.stdout_has), std::string::npos) << r.out;
  }
  if (!c.stdout_lacks.empty()) {
    EXPECT_EQ(r.out.find(c.stdout_lacks), std::string::npos) << r.out;
  }
  // Nothing left behind, nothing changed.
  auto after = snapshot(dir);
  for (const auto& created : c.creates) after.erase(created);
  for (const auto& [name, contents] : before) {
    ASSERT_TRUE(after.count(name)) << name << " disappeared";
    EXPECT_EQ(after[name], contents) << name << " changed";
  }
  for (const auto& [name, contents] : after) EXPECT_TRUE(before.count(name)) << name << " was left behind";
}

INSTANTIATE_TEST_SUITE_P(Issue18, Probe, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<ProbeCase>& info) { return info.param.name; });

// Item 7: csan-preprocess stopped by a signal while it builds DEST removes DEST.tmp.PID.N
// and exits with 128 + the signal's number; an existing DEST stays as it was.
class PreprocessInterrupt : public testing::TestWithParam<int> {};

TEST_P(PreprocessInterrupt, RemovesItsTemporariesAndExits128PlusSignal) {
  const int signal = GetParam();
  static const std::string corpus = [] {
    const std::string d = make_temp_dir("probe_interrupt_corpus");
    auto r = run({tool("csan-toy-corpus"), "--out-dir", d, "--train", "20000", "--valid", "500", "--test", "10"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return d;
  }();
  const fs::path dir = make_temp_dir("probe_interrupt");
  const fs::path dest = dir / "data-bin";
  const std::string train = corpus + "/train", valid = corpus + "/valid";
  const std::vector<std::string> args{bin("csan-preprocess"),
                                      "-s",
                                      "src",
                                      "-t",
                                      "tgt",
                                      "--trainpref",
                                      train,
                                      "--validpref",
                                      valid,
                                      "--destdir",
                                      dest.string(),
                                      "--spm-vocab-size",
                                      "400",
                                      "--workers",
                                      "2"};
  // A finished earlier build with the same settings: the interrupted rebuild must leave it as it is.
  ASSERT_EQ(run(args).exit_code, 0);
  const auto earlier = snapshot(dest);
  const pid_t child = ::fork();
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  // Wait for the staged directory, then interrupt.
  auto staged = [&] {
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().filename().string().rfind("data-bin.tmp.", 0) == 0) return true;
    return false;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!staged() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(staged());
  ::kill(child, signal);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir)) left.push_back(entry.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"data-bin"});
  EXPECT_EQ(snapshot(dest), earlier);
}

INSTANTIATE_TEST_SUITE_P(Issue18, PreprocessInterrupt, testing::Values(SIGTERM, SIGINT),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::string(info.param == SIGTERM ? "SIGTERM" : "SIGINT");
                         });

// Item 7: the leftover of a run that died without cleaning up (SIGKILL, power loss) is
// removed by the next run into the same DEST, and only if its process is gone.
TEST(PreprocessLeftovers, NextRunRemovesThoseOfDeadProcesses) {
  const fs::path dir = make_temp_dir("probe_leftovers");
  write_inputs(dir);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const fs::path of_dead = dir / ("out.tmp." + std::to_string(dead) + ".0");
  const fs::path of_live = dir / ("out.tmp." + std::to_string(::getpid()) + ".0");
  write(of_dead / "train.src-tgt.src.bin", "half");
  write(of_live / "train.src-tgt.src.bin", "still being written");
  auto r =
      run({"/bin/bash", "-c", "$PREPROCESS -s src -t tgt --trainpref corpus/train --destdir out --spm-vocab-size 30"},
          "", {"PREPROCESS=" + bin("csan-preprocess")}, dir.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("removed the leftover of an interrupted run: out.tmp." + std::to_string(dead) + ".0"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(of_dead));
  EXPECT_TRUE(fs::exists(of_live));
  EXPECT_TRUE(fs::exists(dir / "out" / "preprocess.json"));
}

}  // namespace
