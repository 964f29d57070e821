#include "toolkit/core/temporary_paths.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "toolkit/core/remove_tree.h"

namespace csan {

namespace {

struct Registry {
  std::recursive_mutex mutex;  // a commit holding it registers and forgets paths
  std::set<std::string> paths;
};

// Never destroyed: the watcher thread may use it while static destructors run at exit.
Registry& registry() {
  static Registry* instance = new Registry;
  return *instance;
}

bool ignored_at_start(int signal) {
  struct sigaction current {};
  return ::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

[[noreturn]] void clean_up_and_exit(const char* program, int signal) {
  Registry& r = registry();
  // Kept locked until _exit: no commit can start putting a result into place meanwhile.
  r.mutex.lock();
  for (const auto& path : r.paths) {
    // Other threads may still be writing into a staged directory; a few passes catch
    // the files they create between listing and removal.
    std::error_code ec;
    for (int attempt = 0;
         attempt < 5 && std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
         ++attempt)
      remove_tree(path);
  }
  std::fprintf(stderr, "%s: interrupted by SIG%s; removed its temporary files\n", program, sigabbrev_np(signal));
  std::fflush(stderr);
  ::_exit(128 + signal);
}

}  // namespace

void register_temporary(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  registry().paths.insert(path);
}

void forget_temporary(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(registry().mutex);
  registry().paths.erase(path);
}

std::unique_lock<std::recursive_mutex> hold_temporaries() {
  return std::unique_lock<std::recursive_mutex>(registry().mutex);
}

void remove_temporaries_on_interrupt(const char* program) {
  static std::once_flag once;
  std::call_once(once, [program] {
    sigset_t signals;
    sigemptyset(&signals);
    for (int signal : {SIGINT, SIGTERM, SIGHUP})
      if (!ignored_at_start(signal)) sigaddset(&signals, signal);
    if (sigisemptyset(&signals)) return;
    // Threads inherit the mask, so the watcher below is the only one to receive them.
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread([signals, program] {
      int signal = 0;
      while (sigwait(&signals, &signal) != 0) {
      }
      clean_up_and_exit(program, signal);
    }).detach();
  });
}

}  // namespace csan
