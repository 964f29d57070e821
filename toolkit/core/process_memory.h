// The memory this process holds, as `top` and /usr/bin/time report it: logged with every
// training record so that a run's growth can be read from metrics.jsonl.
#pragma once

namespace csan::core {

// Resident set size now, in MiB (/proc/self/statm); 0 where the system does not say.
double resident_mib();
// The largest resident set size so far, in MiB (getrusage's ru_maxrss).
double peak_resident_mib();

// Drops from the resident set the pages of shared libraries' (and this executable's) code
// and read-only data that the process never wrote: clean pages of private, read-only file
// mappings. LibTorch's start-up touches about 36 MiB of libtorch_cpu (every operator's
// registration runs once) that decoding never runs again. The pages stay in the page cache;
// those still used fault back in (minor faults) at their next use. Mappings holding pages
// of the process's own (relocated data) are left alone. For the end of start-up and
// loading, before a long phase that needs little of that code. Returns the KiB dropped
// (0 where /proc/self/smaps cannot be read).
long release_clean_library_pages();

}  // namespace csan::core
