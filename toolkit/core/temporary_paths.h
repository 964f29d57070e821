// The temporaries of atomic writes in progress (AtomicFile, AtomicDirectory), so that a
// program stopped by Ctrl-C or `kill` removes them instead of leaving DEST.tmp.PID.N
// behind. Registration is always on; only programs that ask for it clean up on signals.
#pragma once

#include <mutex>
#include <string>

namespace csan {

// `path` is a temporary of this process until forget_temporary(path).
void register_temporary(const std::string& path);
void forget_temporary(const std::string& path);

// Held while a commit renames temporaries into place: the interrupt cleanup waits for it,
// so a signal never removes half of a result that is being put into place.
std::unique_lock<std::recursive_mutex> hold_temporaries();

// From now on SIGINT, SIGTERM and SIGHUP remove every registered temporary, print
// "PROGRAM: interrupted by SIGTERM; removed its temporary files" and exit with status
// 128 + the signal number (130, 143, 129), as shells report a killed program. Call it at
// the start of main(), before any thread starts: the signals are blocked in every thread
// and taken by a watcher thread, so the cleanup runs outside a signal handler. A signal
// ignored when the program started (nohup, background jobs) stays ignored.
void remove_temporaries_on_interrupt(const char* program);

}  // namespace csan
