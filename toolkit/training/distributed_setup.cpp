#include "toolkit/training/distributed_setup.h"

#include <cstdlib>
#include <limits>

#include "toolkit/core/error.h"

namespace csan::training {

namespace {

constexpr const char* kSection = "distributed_training.";

std::string key(const std::string& name) { return kSection + name; }

int64_t parse_int(const std::string& what, const std::string& text, int64_t min, int64_t max) {
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size())
    throw Error(what + "='" + text + "': not an integer");
  if (value < min || value > max)
    throw Error(what + "=" + text + ": must be between " + std::to_string(min) + " and " + std::to_string(max));
  return value;
}

struct EnvReader {
  const Environment& env;
  std::optional<std::string> get(const std::string& name) const {
    auto v = env(name);
    if (v && v->empty()) return std::nullopt;  // VAR= counts as unset, as in torchrun
    return v;
  }
  std::string require(const std::string& name, const std::string& convention) const {
    auto v = get(name);
    if (!v) throw Error("environment variable " + name + " is not set (needed by the " + convention + " convention)");
    return *v;
  }
  int64_t integer(const std::string& name, int64_t min, int64_t max) const {
    return parse_int("environment variable " + name, *get(name), min, max);
  }
};

constexpr int64_t kMaxWorld = 1 << 20;

void parse_tcp_init_method(const std::string& method, DistributedSetup& setup) {
  const std::string prefix = "tcp://";
  const auto colon = method.rfind(':');
  if (method.compare(0, prefix.size(), prefix) != 0 || colon == std::string::npos || colon <= prefix.size())
    throw Error::for_key(key("distributed_init_method"), "expected tcp://HOST:PORT or env://, got '" + method + "'");
  setup.master_addr = method.substr(prefix.size(), colon - prefix.size());
  if (setup.master_addr.size() > 2 && setup.master_addr.front() == '[' && setup.master_addr.back() == ']')
    setup.master_addr = setup.master_addr.substr(1, setup.master_addr.size() - 2);  // [IPv6]
  setup.master_port =
      static_cast<int>(parse_int("port of " + key("distributed_init_method"), method.substr(colon + 1), 1, 65535));
}

// A rank or world size given both as a flag and by the environment must agree.
void check_agrees(const core::Config& cfg, const std::string& name, int64_t from_env, const std::string& variable) {
  if (cfg.is_set(key(name)) && cfg.get<int64_t>(key(name)) != from_env)
    throw Error::for_key(key(name), "is " + std::to_string(cfg.get<int64_t>(key(name))) + " but " + variable +
                                        " is " + std::to_string(from_env));
}

}  // namespace

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

void declare_distributed_options(core::ConfigSchema& s) {
  s.add_int(key("distributed_world_size"), 1,
            "number of workers; >1 without a rank launches that many local workers", 1, kMaxWorld);
  s.add_int(key("distributed_rank"), -1, "this worker's rank (-1: from RANK / SLURM_PROCID)", -1, kMaxWorld - 1);
  s.add_string(key("distributed_init_method"), "", "tcp://HOST:PORT of rank 0's rendezvous store, or env://");
  s.add_int(key("distributed_port"), -1, "rendezvous port (Slurm, local launch; -1: MASTER_PORT or a free port)", -1,
            65535);
  s.add_string(key("distributed_backend"), "auto", "collectives: gloo (CPU), nccl (CUDA), auto", {"auto", "gloo", "nccl"});
  s.add_int(key("device_id"), -1, "local rank / CUDA device (-1: from LOCAL_RANK / SLURM_LOCALID)", -1, 1 << 16);
  s.add_double(key("distributed_timeout"), 300.0,
               "seconds a rendezvous or collective may wait for a peer before failing", 0.001);
  s.add_double(key("bucket_cap_mb"), 25.0, "gradients are all-reduced in buckets of this many MB", 0.001);
}

std::string first_slurm_host(const std::string& nodelist) {
  const auto bracket = nodelist.find('[');
  const auto comma = nodelist.find(',');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return nodelist.substr(0, comma);
  const auto end = nodelist.find_first_of(",-]", bracket + 1);
  if (end == std::string::npos) throw Error("SLURM_JOB_NODELIST='" + nodelist + "': unbalanced '['");
  return nodelist.substr(0, bracket) + nodelist.substr(bracket + 1, end - bracket - 1);
}

DistributedSetup resolve_distributed_setup(const core::Config& cfg, const Environment& environment) {
  const EnvReader env{environment};
  DistributedSetup s;
  s.backend = cfg.get<std::string>(key("distributed_backend"));
  s.timeout_seconds = cfg.get<double>(key("distributed_timeout"));
  s.bucket_cap_mb = cfg.get<double>(key("bucket_cap_mb"));
  const int64_t flag_world = cfg.get<int64_t>(key("distributed_world_size"));
  const int64_t flag_rank = cfg.get<int64_t>(key("distributed_rank"));
  const int64_t flag_port = cfg.get<int64_t>(key("distributed_port"));
  const int64_t device_id = cfg.get<int64_t>(key("device_id"));
  const std::string init_method = cfg.get<std::string>(key("distributed_init_method"));
  auto local_rank_from = [&](const std::string& variable) {
    if (device_id >= 0) return static_cast<int>(device_id);
    return env.get(variable) ? static_cast<int>(env.integer(variable, 0, kMaxWorld - 1)) : 0;
  };

  const bool torchrun = init_method == "env://" || (init_method.empty() && env.get("RANK"));
  const bool slurm = init_method.empty() && !torchrun && env.get("SLURM_PROCID") && env.get("SLURM_NTASKS") &&
                     env.integer("SLURM_NTASKS", 1, kMaxWorld) > 1;
  if (!init_method.empty() && !torchrun) {
    parse_tcp_init_method(init_method, s);
    if (flag_rank < 0)
      throw Error::for_key(key("distributed_rank"), "must be given with --distributed-init-method " + init_method);
    s.world_size = static_cast<int>(flag_world);
    s.rank = static_cast<int>(flag_rank);
    s.local_rank = local_rank_from("LOCAL_RANK");
    s.source = "--distributed-init-method";
  } else if (torchrun) {
    const std::string convention = "torchrun (env://)";
    s.world_size = static_cast<int>(parse_int("environment variable WORLD_SIZE", env.require("WORLD_SIZE", convention),
                                              1, kMaxWorld));
    s.rank = static_cast<int>(parse_int("environment variable RANK", env.require("RANK", convention), 0,
                                        kMaxWorld - 1));
    check_agrees(cfg, "distributed_world_size", s.world_size, "WORLD_SIZE");
    check_agrees(cfg, "distributed_rank", s.rank, "RANK");
    s.master_addr = env.require("MASTER_ADDR", convention);
    s.master_port = static_cast<int>(parse_int("environment variable MASTER_PORT",
                                               env.require("MASTER_PORT", convention), 1, 65535));
    s.local_rank = local_rank_from("LOCAL_RANK");
    s.rank0_is_store_client = env.get("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
    s.source = "torchrun environment";
  } else if (slurm) {
    s.world_size = static_cast<int>(env.integer("SLURM_NTASKS", 1, kMaxWorld));
    s.rank = static_cast<int>(env.integer("SLURM_PROCID", 0, kMaxWorld - 1));
    check_agrees(cfg, "distributed_world_size", s.world_size, "SLURM_NTASKS");
    check_agrees(cfg, "distributed_rank", s.rank, "SLURM_PROCID");
    if (flag_port > 0) {
      s.master_port = static_cast<int>(flag_port);
    } else if (env.get("MASTER_PORT")) {
      s.master_port = static_cast<int>(env.integer("MASTER_PORT", 1, 65535));
    } else {
      throw Error("Slurm job step with " + std::to_string(s.world_size) +
                  " tasks: give --distributed-port (or MASTER_PORT) so the tasks can meet");
    }
    if (auto addr = env.get("MASTER_ADDR")) {
      s.master_addr = *addr;
    } else if (auto nodes = env.get("SLURM_JOB_NODELIST") ? env.get("SLURM_JOB_NODELIST") : env.get("SLURM_NODELIST")) {
      s.master_addr = first_slurm_host(*nodes);
    } else {
      throw Error("Slurm job step: neither MASTER_ADDR nor SLURM_JOB_NODELIST is set (cannot find rank 0's host)");
    }
    s.local_rank = local_rank_from("SLURM_LOCALID");
    s.source = "Slurm environment";
  } else if (flag_world > 1) {
    if (flag_rank >= 0)
      throw Error::for_key(key("distributed_rank"),
                           "needs --distributed-init-method tcp://HOST:PORT (or the torchrun variables); "
                           "without them --distributed-world-size launches all workers locally");
    s.world_size = static_cast<int>(flag_world);
    s.master_port = flag_port > 0 ? static_cast<int>(flag_port) : 0;
    s.launch_local_workers = true;
    s.source = "local launch";
  }
  if (s.rank >= s.world_size)
    throw Error("rank " + std::to_string(s.rank) + " is not below the world size " + std::to_string(s.world_size) +
                " (" + s.source + ")");
  return s;
}

}  // namespace csan::training
