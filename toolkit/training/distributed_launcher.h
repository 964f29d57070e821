// `csan-train RECIPE --distributed-world-size N` on one machine: this process becomes a
// supervisor that runs N copies of the same command line as workers (the torchrun
// variables RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT set), waits
// for them, forwards SIGINT/SIGTERM, and when one worker fails stops the others and
// reports which rank failed.
#pragma once

#include <string>
#include <vector>

#include "toolkit/training/distributed_setup.h"

namespace csan::training {

// A TCP port on 127.0.0.1 that nobody listens on right now.
int find_free_port();

// The environment a local worker gets: `base` (NAME=VALUE strings) with the launcher
// variables replaced, and OMP_NUM_THREADS = cores / workers unless already set.
std::vector<std::string> worker_environment(const std::vector<std::string>& base, const DistributedSetup& setup,
                                            int rank, unsigned cores);

// Runs argv (this executable's own command line) as setup.world_size workers and
// returns the exit status for the launcher: 0 when all succeeded, 128 + signal when they
// stopped on SIGINT/SIGTERM; a failed worker is a csan::Error naming its rank.
int launch_local_workers(const DistributedSetup& setup, char** argv);

}  // namespace csan::training
