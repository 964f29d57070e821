#include "toolkit/training/distributed_setup.h"

#include <gtest/gtest.h>

#include <map>

#include "toolkit/core/error.h"
#include "toolkit/training/distributed_launcher.h"

namespace csan::training {
namespace {

using Vars = std::map<std::string, std::string>;

Environment env_of(const Vars& vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

core::Config config(const Vars& keys = {}) {
  core::ConfigSchema schema;
  declare_distributed_options(schema);
  core::Config cfg(schema);
  for (const auto& [k, v] : keys) cfg.apply_override("distributed_training." + k + "=" + v);
  return cfg;
}

std::string setup_error_of(const core::Config& cfg, const Vars& env) {
  try {
    resolve_distributed_setup(cfg, env_of(env));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DistributedSetup, SingleProcessByDefault) {
  const auto s = resolve_distributed_setup(config(), env_of({}));
  EXPECT_EQ(s.world_size, 1);
  EXPECT_EQ(s.rank, 0);
  EXPECT_FALSE(s.distributed());
  EXPECT_FALSE(s.launch_local_workers);
  EXPECT_EQ(s.timeout_seconds, 300);
  EXPECT_EQ(s.bucket_cap_mb, 25);
}

TEST(DistributedSetup, WorldSizeAloneLaunchesLocalWorkers) {
  const auto s = resolve_distributed_setup(config({{"distributed_world_size", "3"}, {"distributed_port", "4567"}}),
                                           env_of({}));
  EXPECT_TRUE(s.launch_local_workers);
  EXPECT_FALSE(s.distributed());
  EXPECT_EQ(s.world_size, 3);
  EXPECT_EQ(s.master_port, 4567);
}

TEST(DistributedSetup, TorchrunVariables) {
  const auto s = resolve_distributed_setup(
      config({{"distributed_timeout", "7.5"}}),
      env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.2"},
              {"MASTER_PORT", "29500"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  EXPECT_TRUE(s.distributed());
  EXPECT_EQ(s.rank, 3);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.master_addr, "10.0.0.2");
  EXPECT_EQ(s.master_port, 29500);
  EXPECT_TRUE(s.rank0_is_store_client);
  EXPECT_EQ(s.timeout_seconds, 7.5);
}

TEST(DistributedSetup, SlurmVariables) {
  const auto s = resolve_distributed_setup(
      config({{"distributed_port", "12345"}}),
      env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
              {"SLURM_JOB_NODELIST", "gpu[07-08],cpu1"}}));
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.world_size, 8);
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.master_addr, "gpu07");
  EXPECT_EQ(s.master_port, 12345);
  EXPECT_EQ(s.source, "Slurm environment");
}

TEST(DistributedSetup, SlurmSingleTaskIsNotDistributed) {
  const auto s = resolve_distributed_setup(config(), env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}}));
  EXPECT_FALSE(s.distributed());
}

TEST(DistributedSetup, TorchrunWinsOverSlurm) {
  const auto s = resolve_distributed_setup(
      config(), env_of({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "9"},
                        {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.rank, 1);
}

TEST(DistributedSetup, InitMethodFlags) {
  const auto s = resolve_distributed_setup(config({{"distributed_init_method", "tcp://node1:2345"},
                                                   {"distributed_rank", "1"},
                                                   {"distributed_world_size", "2"},
                                                   {"device_id", "0"}}),
                                           env_of({{"RANK", "7"}}));
  EXPECT_EQ(s.master_addr, "node1");
  EXPECT_EQ(s.master_port, 2345);
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.world_size, 2);
  EXPECT_EQ(s.local_rank, 0);
}

TEST(DistributedSetup, BadValuesNameTheVariableOrKey) {
  EXPECT_EQ(
      setup_error_of(config(), {{"RANK", "abc"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
      "environment variable RANK='abc': not an integer");
  EXPECT_EQ(setup_error_of(config(), {{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "rank 2 is not below the world size 2 (torchrun environment)");
  EXPECT_EQ(setup_error_of(config(), {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}),
            "environment variable MASTER_ADDR is not set (needed by the torchrun (env://) convention)");
  EXPECT_EQ(
      setup_error_of(config(), {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}}),
      "environment variable MASTER_PORT=70000: must be between 1 and 65535");
  EXPECT_EQ(setup_error_of(config({{"distributed_world_size", "4"}}),
                           {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "key 'distributed_training.distributed_world_size': is 4 but WORLD_SIZE is 2");
  EXPECT_EQ(setup_error_of(config(), {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_NODELIST", "a"}}),
            "Slurm job step with 2 tasks: give --distributed-port (or MASTER_PORT) so the tasks can meet");
  EXPECT_EQ(setup_error_of(config({{"distributed_init_method", "udp://x:1"}, {"distributed_rank", "0"}}), {}),
            "key 'distributed_training.distributed_init_method': expected tcp://HOST:PORT or env://, got 'udp://x:1'");
  EXPECT_EQ(setup_error_of(config({{"distributed_init_method", "tcp://x:1"}, {"distributed_world_size", "2"}}), {}),
            "key 'distributed_training.distributed_rank': must be given with --distributed-init-method tcp://x:1");
  EXPECT_NE(setup_error_of(config({{"distributed_world_size", "2"}, {"distributed_rank", "1"}}), {})
                .find("needs "
                      "--distributed-init-method"),
            std::string::npos);
}

TEST(DistributedSetup, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node[03-05,9],gpu1"), "node03");
  EXPECT_EQ(first_slurm_host("a1,a2"), "a1");
  EXPECT_EQ(first_slurm_host("single"), "single");
  EXPECT_EQ(first_slurm_host("n[7]"), "n7");
  EXPECT_THROW(first_slurm_host("n[7"), Error);
}

TEST(DistributedLauncher, WorkerEnvironmentReplacesLauncherVariables) {
  DistributedSetup s;
  s.world_size = 2;
  s.master_port = 4242;
  const auto env = worker_environment({"PATH=/bin", "RANK=9", "MASTER_PORT=1"}, s, 1, 16);
  const std::vector<std::string> expected{"PATH=/bin",       "RANK=1",           "LOCAL_RANK=1",     "WORLD_SIZE=2",
                                          "MASTER_ADDR=127.0.0.1", "MASTER_PORT=4242", "OMP_NUM_THREADS=8"};
  EXPECT_EQ(env, expected);
  const auto kept = worker_environment({"OMP_NUM_THREADS=1"}, s, 0, 16);
  EXPECT_EQ(std::count(kept.begin(), kept.end(), "OMP_NUM_THREADS=1"), 1);
  EXPECT_EQ(std::count_if(kept.begin(), kept.end(), [](const std::string& e) { return e.rfind("OMP_", 0) == 0; }), 1);
}

TEST(DistributedLauncher, FreePortIsUsable) {
  const int port = find_free_port();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

}  // namespace
}  // namespace csan::training
