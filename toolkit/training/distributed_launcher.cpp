#include "toolkit/training/distributed_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "toolkit/core/cpu_threads.h"
#include "toolkit/core/error.h"

extern char** environ;

namespace csan::training {

namespace {

volatile sig_atomic_t forwarded_signal = 0;
extern "C" void remember_signal(int signal) { forwarded_signal = signal; }

struct Worker {
  int rank;
  pid_t pid;
  bool running = true;
  int status = 0;
};

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "stopped with wait status " + std::to_string(status);
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

bool stopped_by_request(int status) {
  const int code = exit_code(status);
  return code == 128 + SIGINT || code == 128 + SIGTERM;
}

void signal_running(std::vector<Worker>& workers, int signal) {
  for (auto& w : workers)
    if (w.running) kill(w.pid, signal);
}

pid_t spawn(char** argv, const std::vector<std::string>& env) {
  // Everything exec needs is prepared before fork: the child only makes system calls.
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(std::string("cannot start a worker process: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // a killed launcher takes its workers along
    if (getppid() != parent) _exit(1);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

int find_free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  close(fd);
  if (!ok) throw Error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
  return ntohs(address.sin_port);
}

std::vector<std::string> worker_environment(const std::vector<std::string>& base, const DistributedSetup& setup,
                                            int rank, unsigned cores) {
  const std::vector<std::string> replaced{"RANK",        "LOCAL_RANK",  "WORLD_SIZE",
                                          "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_USE_AGENT_STORE"};
  std::vector<std::string> env;
  bool has_threads = false;
  for (const auto& entry : base) {
    const std::string name = entry.substr(0, entry.find('='));
    if (std::find(replaced.begin(), replaced.end(), name) != replaced.end()) continue;
    has_threads = has_threads || name == "OMP_NUM_THREADS";
    env.push_back(entry);
  }
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("LOCAL_RANK=" + std::to_string(rank));
  env.push_back("WORLD_SIZE=" + std::to_string(setup.world_size));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back("MASTER_PORT=" + std::to_string(setup.master_port));
  // N workers each with every core's worth of threads would fight over the cores.
  if (!has_threads)
    env.push_back("OMP_NUM_THREADS=" + std::to_string(std::max(1u, cores / static_cast<unsigned>(setup.world_size))));
  return env;
}

int launch_local_workers(const DistributedSetup& given, char** argv) {
  DistributedSetup setup = given;
  if (setup.master_port == 0) setup.master_port = find_free_port();
  std::vector<std::string> base;
  for (char** e = environ; *e; ++e) base.emplace_back(*e);

  struct sigaction action {}, old_int, old_term;
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  forwarded_signal = 0;

  std::vector<Worker> workers;
  try {
    for (int rank = 0; rank < setup.world_size; ++rank)
      workers.push_back({rank, spawn(argv, worker_environment(base, setup, rank, core::usable_cpu_count()))});
  } catch (...) {
    signal_running(workers, SIGKILL);
    throw;
  }

  const Worker* first_failure = nullptr;
  std::chrono::steady_clock::time_point kill_deadline{};
  bool forwarded = false;
  auto running = [&] { return std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.running; }); };
  while (running()) {
    if (forwarded_signal && !forwarded) {
      // The terminal already sent SIGINT to the whole process group; SIGTERM sent to the
      // launcher alone reaches the workers only this way. Either way they stop together.
      signal_running(workers, forwarded_signal);
      forwarded = true;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (first_failure && std::chrono::steady_clock::now() > kill_deadline) signal_running(workers, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    auto it = std::find_if(workers.begin(), workers.end(), [&](const Worker& w) { return w.pid == pid; });
    if (it == workers.end()) continue;
    it->running = false;
    it->status = status;
    const bool failed = exit_code(status) != 0 && !(forwarded && stopped_by_request(status));
    if (failed && !first_failure) {
      first_failure = &*it;
      // The others notice the lost peer at their next collective and exit with their own
      // message; those stuck longer than the collective timeout are killed.
      signal_running(workers, SIGTERM);
      kill_deadline = std::chrono::steady_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(setup.timeout_seconds * 1000) + 5000);
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);

  if (first_failure)
    throw Error("worker rank " + std::to_string(first_failure->rank) + " (pid " + std::to_string(first_failure->pid) +
                ") " + describe(first_failure->status) + "; stopped the other " +
                std::to_string(setup.world_size - 1) + " worker(s)");
  return exit_code(workers.front().status);
}

}  // namespace csan::training
