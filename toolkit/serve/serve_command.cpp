#include "toolkit/serve/serve_command.h"

#include <sys/resource.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <fstream>
#include <mutex>

#include "toolkit/core/error.h"
#include "toolkit/serve/stop_signals.h"

namespace csan::serve {

void run_serve(const ServeCommand& command, std::ostream& log) {
  // Each connection holds a descriptor: allow as many as the hard limit, so that many idle
  // clients cannot make accept() fail for the others.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  std::ofstream access_file;
  if (!command.access_log.empty()) {
    access_file.open(command.access_log, std::ios::app);
    if (!access_file)
      throw Error("access-log: cannot open " + command.access_log + ": " + std::strerror(errno), ErrorKind::bad_option);
  }
  // A signal during the model loading stops the server before it serves; one after it
  // stops the server. The mutex orders the two.
  std::mutex mutex;
  TranslationServer* running = nullptr;
  bool stop_requested = false;
  StopSignals signals([&](int signal) {
    std::lock_guard<std::mutex> lock(mutex);
    log << "csan-serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
        << ": no new connections; answering the accepted requests, then exiting (a second signal exits at once)"
        << std::endl;
    stop_requested = true;
    if (running) running->stop();
  });
  TranslationServer server(command.models, command.server, log, access_file.is_open() ? access_file : log);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (stop_requested) return;
    running = &server;
  }
  server.serve();
  {
    std::lock_guard<std::mutex> lock(mutex);
    running = nullptr;
  }
  log << "csan-serve: stopped" << std::endl;
}

}  // namespace csan::serve
