// The memory this process holds, as `top` and /usr/bin/time report it: logged with every
// training record so that a run's growth can be read from metrics.jsonl.
#pragma once

namespace csan::core {

// Resident set size now, in MiB (/proc/self/statm); 0 where the system does not say.
double resident_mib();
// The largest resident set size so far, in MiB (getrusage's ru_maxrss).
double peak_resident_mib();

}  // namespace csan::core
