#include "toolkit/training/run_info.h"

#include <dlfcn.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "toolkit/core/cpu_flags.h"
#include "toolkit/core/json_text.h"

#ifndef CSAN_VERSION
#define CSAN_VERSION "unknown"
#endif

namespace csan::training {

namespace {

// The model name and the flags that decide this CPU's speed (AVX2/FMA kernels,
// AVX-512, bf16 and int8 matrix instructions).
std::pair<std::string, std::string> cpu() {
  static const std::set<std::string> kRelevant = {"avx",         "avx2",        "fma",      "avx512f",
                                                  "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8"};
  std::string joined;
  for (const auto& f : core::cpu_flags())
    if (kRelevant.count(f)) joined += (joined.empty() ? "" : " ") + f;
  return {core::cpu_model_name(), joined};
}

std::string text(const core::Config& cfg, const std::string& key) {
  return cfg.schema().has(key) && cfg.has(key) ? cfg.get<std::string>(key) : "";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

}  // namespace

std::string blas_library() {
  void* symbol = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info;
  if (!symbol || !dladdr(symbol, &info) || !info.dli_fname) return "unknown";
  std::error_code error;
  const auto resolved = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::string(info.dli_fname) : resolved.string();
}

std::string run_info_json(const core::Config& cfg, const std::string& command_line, int world_size,
                          int64_t parameters) {
  const auto [model, flags] = cpu();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const nlohmann::ordered_json info = {
      {"started", utc_now()},
      {"command", command_line},
      {"csan_version", CSAN_VERSION},
      {"libtorch", std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                       std::to_string(TORCH_VERSION_PATCH)},
      {"blas", blas_library()},
      {"cpu", model},
      {"cpu_flags", flags},
      {"host", host},
      {"precision", text(cfg, "common.precision")},
      {"threads", torch::get_num_threads()},
      {"interop_threads", torch::get_num_interop_threads()},
      {"omp_num_threads", omp ? omp : ""},
      {"world_size", world_size},
      {"task", text(cfg, "task.name")},
      {"arch", text(cfg, "model.arch")},
      {"parameters", parameters},
  };
  return core::json_text(info) + "\n";
}

}  // namespace csan::training
