#include "toolkit/nn/compute_device.h"

#include "toolkit/core/error.h"

namespace csan::nn {

torch::Device compute_device(bool force_cpu, int64_t local_rank) {
  if (force_cpu || !torch::cuda::is_available()) return torch::kCPU;
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  const int64_t index = local_rank < 0 ? 0 : local_rank % gpus;
  return {torch::kCUDA, static_cast<c10::DeviceIndex>(index)};
}

torch::Device named_device(const std::string& name, const std::string& option) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) throw Error(option + ": cuda: LibTorch sees no CUDA GPU", ErrorKind::bad_option);
    return torch::kCUDA;
  }
  throw Error(option + ": unknown value '" + name + "' (cpu or cuda)", ErrorKind::bad_option);
}

torch::Device device_of(const torch::nn::Module& module) {
  for (const auto& p : module.parameters()) return p.device();
  for (const auto& b : module.buffers()) return b.device();
  return torch::kCPU;
}

std::string describe_device(const torch::Device& device) {
  if (!device.is_cuda()) return device.str();
  // (The GPU's name needs LibTorch's CUDA headers, which a CPU build lacks.)
  return device.str() + " (" + std::to_string(torch::cuda::device_count()) + " GPU(s) visible)";
}

}  // namespace csan::nn
