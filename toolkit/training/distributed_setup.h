// Who this process is in a data-parallel run, resolved once at start-up from the
// distributed_training.* keys (fairseq's names) and the launcher conventions:
//   --distributed-init-method tcp://HOST:PORT --distributed-rank R --distributed-world-size N
//   torchrun / env://: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK
//   Slurm (srun, one task per worker): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
//     SLURM_JOB_NODELIST (first host is the master) + --distributed-port or MASTER_PORT
//   --distributed-world-size N alone: this process launches N local workers.
// Explicit flags win over torchrun variables, which win over Slurm's.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "toolkit/core/config.h"

namespace csan::training {

struct DistributedSetup {
  int world_size = 1;
  int rank = 0;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;       // 0 while unknown (a local launch picks a free one)
  std::string backend = "gloo";  // "gloo" (CPU) or "nccl" (CUDA)
  double timeout_seconds = 300;  // rendezvous and every collective
  double bucket_cap_mb = 25;
  bool launch_local_workers = false;  // this process only spawns and supervises
  bool rank0_is_store_client = false;  // torchrun's agent already hosts the store
  std::string source = "single process";  // where the values came from, for messages

  bool distributed() const { return world_size > 1 && !launch_local_workers; }
};

// Reads an environment variable; nullopt when unset. Tests pass a map instead.
using Environment = std::function<std::optional<std::string>(const std::string&)>;
Environment process_environment();

void declare_distributed_options(core::ConfigSchema& schema);

// Bad or contradictory values (RANK=abc, RANK >= WORLD_SIZE, a port out of range, a
// missing MASTER_ADDR) are one-line csan::Errors naming the variable or key.
DistributedSetup resolve_distributed_setup(const core::Config& cfg, const Environment& env = process_environment());

// "node[03-05,9],gpu1" -> "node03": the master host of a Slurm job.
std::string first_slurm_host(const std::string& nodelist);

}  // namespace csan::training
