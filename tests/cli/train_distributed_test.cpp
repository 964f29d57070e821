// Data-parallel csan-train end to end on loopback Gloo, tiny model, 1 thread per worker:
// the local launcher, the torchrun convention, equivalence with update_freq, resuming
// with another world size, and the faults (a killed worker, SIGTERM on one rank, bad
// launcher variables).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;
using Clock = std::chrono::steady_clock;

namespace {

const std::string& data_dir() {
  static const std::string dir = make_toy_data("dist_data", 300, 20, 5);
  return dir;
}

// The tiny recipe without dropout (so runs with different world sizes are comparable),
// small batches, one log record per update.
std::vector<std::string> train_args(const std::string& save_dir, std::vector<std::string> extra,
                                    const std::string& timeout_seconds = "8") {
  std::vector<std::string> args{bin("csan-train"),
                                std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
                                "--data",
                                data_dir(),
                                "--save-dir",
                                save_dir,
                                "--max-tokens",
                                "400",
                                "--log-interval",
                                "1",
                                "--set",
                                "model.dropout=0",
                                "--set",
                                "lr_scheduler.warmup_updates=4",
                                "--distributed-timeout",
                                timeout_seconds};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<std::string> kOneThread{"OMP_NUM_THREADS=1"};

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

// A process running in the background, its stderr in a file.
struct Background {
  pid_t pid = -1;
  std::string err_path;

  static Background start(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    Background b;
    b.err_path = make_temp_dir("dist_logs") + "/" + std::to_string(Clock::now().time_since_epoch().count()) + ".err";
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    b.pid = fork();
    if (b.pid == 0) {
      const int fd = open(b.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
      execv(args[0], args.data());
      _exit(127);
    }
    return b;
  }
  // Exit code (128 + signal when killed), or -1 if it is still running after `limit`.
  int wait(std::chrono::seconds limit) const {
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid)
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  void kill_and_reap() const {
    ::kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  std::string err() const {
    std::ifstream in(err_path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

std::vector<std::string> torchrun_env(int rank, int port) {
  return {"OMP_NUM_THREADS=1", "RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
          "WORLD_SIZE=2",      "MASTER_ADDR=127.0.0.1",        "MASTER_PORT=" + std::to_string(port)};
}

std::vector<nlohmann::json> train_records(const std::string& save_dir) {
  std::ifstream in(save_dir + "/metrics.jsonl");
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    auto rec = nlohmann::json::parse(line);
    if (rec["kind"] == "train") out.push_back(rec);
  }
  return out;
}

// update number -> loss of that update, from metrics.jsonl.
std::map<int64_t, double> losses_by_update(const std::string& save_dir) {
  std::map<int64_t, double> out;
  for (const auto& rec : train_records(save_dir)) out[rec["update"].get<int64_t>()] = rec["loss"].get<double>();
  return out;
}

void expect_same_losses(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b, int64_t from,
                        int64_t to) {
  for (int64_t u = from; u <= to; ++u) {
    ASSERT_TRUE(a.count(u) && b.count(u)) << "update " << u;
    EXPECT_NEAR(a.at(u), b.at(u), 1e-5 * std::abs(b.at(u))) << "update " << u;
  }
}

bool wait_for_train_records(const std::string& save_dir, size_t n, std::chrono::seconds limit, pid_t watched) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (waitpid(watched, nullptr, WNOHANG) == watched) return false;  // it ended early: see its stderr
    if (fs::exists(save_dir + "/metrics.jsonl") && train_records(save_dir).size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TrainDistributed, LocalLaunchMatchesOneWorkerWithUpdateFreqTwoAndResumesWithOne) {
  // 2 workers, max_tokens B each, 6 updates ...
  const std::string two = make_temp_dir("dist_two");
  auto r = run(train_args(two, {"--distributed-world-size", "2", "--max-update", "6"}), "", kOneThread);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.err, "distributed: 2 workers (torchrun environment)"), 1u) << "rank 1 prints nothing\n" << r.err;
  EXPECT_TRUE(fs::exists(two + "/checkpoint_last.pt"));
  const auto two_losses = losses_by_update(two);
  EXPECT_EQ(train_records(two).size(), 6u) << "one writer of metrics.jsonl";

  // ... equal 1 worker with update_freq 2 over the same batches.
  const std::string one = make_temp_dir("dist_one");
  r = run(train_args(one, {"--update-freq", "2", "--max-update", "10"}), "", kOneThread);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto one_losses = losses_by_update(one);
  expect_same_losses(two_losses, one_losses, 1, 6);

  // The 2-worker checkpoint resumes with 1 worker (update_freq 2: the same batches per
  // update) exactly where it stopped: updates 7..10 equal the uninterrupted run's.
  r = run(train_args(two, {"--update-freq", "2", "--max-update", "10"}), "", kOneThread);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("update 6"), std::string::npos) << r.err;
  expect_same_losses(losses_by_update(two), one_losses, 7, 10);
}

TEST(TrainDistributed, KilledWorkerMakesTheOtherExitNamingItWithinTheTimeout) {
  const std::string save = make_temp_dir("dist_kill");
  const int port = free_port();
  const auto args = train_args(save, {"--max-update", "100000"}, "5");
  auto rank0 = Background::start(args, torchrun_env(0, port));
  auto rank1 = Background::start(args, torchrun_env(1, port));
  ASSERT_TRUE(wait_for_train_records(save, 2, std::chrono::seconds(60), rank0.pid)) << rank0.err();
  rank1.kill_and_reap();
  const auto killed = Clock::now();
  const int code = rank0.wait(std::chrono::seconds(20));
  if (code == -1) rank0.kill_and_reap();
  ASSERT_EQ(code, 1) << rank0.err();
  EXPECT_LT(Clock::now() - killed, std::chrono::seconds(5 + 4)) << "within the timeout (plus the check-in grace)";
  const std::string err = rank0.err();
  const std::string last = err.substr(err.rfind("csan-train: error:"));
  EXPECT_NE(last.find("rank 0 of 2:"), std::string::npos) << last;
  EXPECT_NE(last.find("rank 1 stopped answering"), std::string::npos) << last;
  EXPECT_EQ(count(last, "\n"), 1u) << last;
}

std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const auto close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 2));
    char state;
    pid_t ppid;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

TEST(TrainDistributed, LauncherReportsTheWorkerThatDiedAndStopsTheOthers) {
  const std::string save = make_temp_dir("dist_launcher_kill");
  auto launcher =
      Background::start(train_args(save, {"--distributed-world-size", "2", "--max-update", "100000"}, "5"), kOneThread);
  ASSERT_TRUE(wait_for_train_records(save, 2, std::chrono::seconds(60), launcher.pid)) << launcher.err();
  const auto workers = children_of(launcher.pid);
  ASSERT_EQ(workers.size(), 2u);
  // Rank 1 is the second child started; which pid it is shows in the launcher's error.
  const pid_t victim = std::max(workers[0], workers[1]);
  ::kill(victim, SIGKILL);
  const int code = launcher.wait(std::chrono::seconds(25));
  if (code == -1) launcher.kill_and_reap();
  ASSERT_EQ(code, 1) << launcher.err();
  const std::string err = launcher.err();
  EXPECT_NE(err.find("(pid " + std::to_string(victim) + ") was killed by signal 9"), std::string::npos) << err;
  EXPECT_NE(err.find("csan-train: error: worker rank "), std::string::npos) << err;
  EXPECT_TRUE(children_of(launcher.pid).empty());
  for (pid_t w : workers) EXPECT_NE(::kill(w, 0), 0) << "worker " << w << " still running";
}

TEST(TrainDistributed, SigtermToOneRankStopsBothAtTheSameUpdateAndRank0Saves) {
  const std::string save = make_temp_dir("dist_sigterm");
  const int port = free_port();
  const auto args = train_args(save, {"--max-update", "100000"});
  auto rank0 = Background::start(args, torchrun_env(0, port));
  auto rank1 = Background::start(args, torchrun_env(1, port));
  ASSERT_TRUE(wait_for_train_records(save, 2, std::chrono::seconds(60), rank0.pid)) << rank0.err();
  ::kill(rank1.pid, SIGTERM);
  const int code1 = rank1.wait(std::chrono::seconds(20)), code0 = rank0.wait(std::chrono::seconds(20));
  if (code0 == -1) rank0.kill_and_reap();
  if (code1 == -1) rank1.kill_and_reap();
  EXPECT_EQ(code0, 128 + SIGTERM) << rank0.err();
  EXPECT_EQ(code1, 128 + SIGTERM) << rank1.err();
  const std::string err = rank0.err();
  const auto at = err.find("stopped by SIGTERM at update ");
  ASSERT_NE(at, std::string::npos) << err;
  const int64_t stopped_at = std::stoll(err.substr(at + 29));
  EXPECT_EQ(losses_by_update(save).rbegin()->first, stopped_at);
  EXPECT_TRUE(fs::exists(save + "/checkpoint_last.pt"));
  EXPECT_EQ(rank1.err(), "") << "rank 1 is silent";
}

TEST(TrainDistributed, BadLauncherVariablesAreOneLineErrors) {
  const std::string save = make_temp_dir("dist_bad");
  struct Case {
    std::vector<std::string> env;
    std::string expect;
  };
  const std::vector<Case> cases{
      {{"RANK=x", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1"}, "environment variable RANK='x'"},
      {{"RANK=0", "WORLD_SIZE=2", "MASTER_PORT=1"}, "MASTER_ADDR is not set"},
      {{"RANK=3", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1"}, "rank 3 is not below the world size 2"},
      {{"SLURM_PROCID=0", "SLURM_NTASKS=2", "SLURM_JOB_NODELIST=n1"}, "give --distributed-port"},
  };
  for (const auto& c : cases) {
    auto r = run(train_args(save, {"--max-update", "1"}), "", c.env);
    EXPECT_EQ(r.exit_code, 1) << c.expect;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
  // No rank 0 ever comes: the rendezvous gives up within the timeout, naming the store.
  const auto start = Clock::now();
  auto r = run(train_args(save, {"--max-update", "1"}, "1"), "",
               {"RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(free_port())});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("rank 1 of 2: cannot reach the rendezvous store at 127.0.0.1:"), std::string::npos) << r.err;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
}

// The launcher checks what each worker would check before it starts them: a recipe error,
// a model the recipe cannot build, a metric it does not report or a precision this
// machine cannot train in is one line and exit status 1, not one line per worker and
// another about the first rank that failed; nothing is written.
TEST(TrainDistributed, LauncherChecksTheStartOnceBeforeStartingWorkers) {
  const std::string dir = make_temp_dir("dist_checks");
  const std::string recipe = dir + "/two-workers.yaml";
  std::ofstream(recipe) << "model:\n  arch: transformer_tiny\n  bogus: 1\noptimization:\n  max_update: 1\n"
                           "distributed_training:\n  distributed_world_size: 2\n";
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases{
      {{bin("csan-train"), recipe, "--data", data_dir(), "--save-dir", dir + "/ckpt"}, "model.bogus"},
      {train_args(dir + "/ckpt", {"--distributed-world-size", "2", "--set", "model.csan.window=5"}),
       "key 'model.csan.window'"},
      {train_args(dir + "/ckpt", {"--distributed-world-size", "2", "--arch", "ccn_tiny", "--set",
                                  "model.ccn.encoder_left_qkv=[left, left]"}),
       "needs 3 branches, one per gate"},  // found while the model is built
      {train_args(dir + "/ckpt", {"--distributed-world-size", "2", "--set", "checkpoint.best_checkpoint_metric=bleu"}),
       "checkpoint.best_checkpoint_metric"},
      {{bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml", "--data", data_dir(),
        "--save-dir", dir + "/ckpt", "--distributed-world-size", "2", "--max-tokens", "0"},
       "0 (no limit) needs dataset.max_sentences > 0"},
      // Without a CUDA GPU: none to train in fp16 on; with one: --cpu keeps the model off it.
      {train_args(dir + "/ckpt", {"--distributed-world-size", "2", "--precision", "fp16", "--cpu"}),
       "key 'common.precision': 'fp16' needs"},
      // The case: CCN-Base's 4 fp16 workers on a machine without CUDA (or with --cpu).
      {{bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/ccn-base.yaml", "--data", data_dir(), "--save-dir",
        dir + "/ckpt", "--cpu"},
       "key 'common.precision': 'fp16' needs"},
  };
  for (const auto& c : cases) {
    const auto r = run(c.args, "", kOneThread);
    EXPECT_EQ(r.exit_code, 1) << c.expect << "\n" << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(count(r.err, "csan-train: error: "), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir + "/ckpt")) << c.expect;
  }
}

// Two "hosts": network namespaces joined by a veth pair, one worker in each, meeting over
// 10.77.x.1/2 instead of loopback (Gloo binds to the interface GLOO_SOCKET_IFNAME names).
// Needs the right to create namespaces (root); skipped otherwise.
class NetworkNamespaces {
 public:
  NetworkNamespaces() : tag_(std::to_string(getpid() % 100000)) {
    const std::string a = name(0), b = name(1), subnet = "10.77." + std::to_string(getpid() % 250) + ".";
    const std::vector<std::vector<std::string>> steps{
        {"ip", "netns", "add", a},
        {"ip", "netns", "add", b},
        {"ip", "link", "add", "cva" + tag_, "type", "veth", "peer", "name", "cvb" + tag_},
        {"ip", "link", "set", "cva" + tag_, "netns", a},
        {"ip", "link", "set", "cvb" + tag_, "netns", b},
        {"ip", "-n", a, "addr", "add", subnet + "1/24", "dev", "cva" + tag_},
        {"ip", "-n", b, "addr", "add", subnet + "2/24", "dev", "cvb" + tag_},
        {"ip", "-n", a, "link", "set", "cva" + tag_, "up"},
        {"ip", "-n", b, "link", "set", "cvb" + tag_, "up"},
        {"ip", "-n", a, "link", "set", "lo", "up"},
        {"ip", "-n", b, "link", "set", "lo", "up"}};
    for (const auto& step : steps) {
      auto args = step;
      args[0] = "/usr/sbin/ip";
      if (!fs::exists(args[0]) || run(args).exit_code != 0) return;
    }
    master_addr_ = subnet + "1";
    ok_ = true;
  }
  ~NetworkNamespaces() {
    for (int i = 0; i < 2; ++i)
      if (fs::exists("/usr/sbin/ip")) run({"/usr/sbin/ip", "netns", "del", name(i)});
  }
  bool ok() const { return ok_; }
  std::string name(int i) const { return "csan-dist-" + tag_ + (i ? "b" : "a"); }
  std::string interface(int i) const { return (i ? "cvb" : "cva") + tag_; }
  const std::string& master_addr() const { return master_addr_; }

 private:
  std::string tag_, master_addr_;
  bool ok_ = false;
};

TEST(TrainDistributed, TwoHostsSimulatedWithNetworkNamespaces) {
  NetworkNamespaces hosts;
  if (!hosts.ok()) GTEST_SKIP() << "cannot create network namespaces here (needs root)";
  const std::string save = make_temp_dir("dist_netns");
  auto worker = [&](int rank) {
    std::vector<std::string> args{"/usr/sbin/ip",
                                  "netns",
                                  "exec",
                                  hosts.name(rank),
                                  "env",
                                  "OMP_NUM_THREADS=1",
                                  "GLOO_SOCKET_IFNAME=" + hosts.interface(rank)};
    const auto train =
        train_args(save + "/rank" + std::to_string(rank),
                   {"--max-update", "3", "--distributed-init-method", "tcp://" + hosts.master_addr() + ":29517",
                    "--distributed-rank", std::to_string(rank), "--distributed-world-size", "2"});
    args.insert(args.end(), train.begin(), train.end());
    return run(args);
  };
  auto other = std::async(std::launch::async, worker, 1);
  const auto r0 = worker(0);
  const auto r1 = other.get();
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(r0.err.find("rendezvous " + hosts.master_addr() + ":29517"), std::string::npos) << r0.err;
  EXPECT_TRUE(fs::exists(save + "/rank0/checkpoint_last.pt"));
  EXPECT_FALSE(fs::exists(save + "/rank1/checkpoint_last.pt")) << "rank 1 writes no checkpoint";
  EXPECT_EQ(train_records(save + "/rank0").size(), 3u);
}

}  // namespace
