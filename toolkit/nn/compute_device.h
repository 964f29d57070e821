// Where models compute. As in fairseq, a CUDA GPU when LibTorch sees one (worker N of a
// data-parallel run takes GPU N mod the GPUs present), the CPU when the user asks for it
// (csan-train --cpu, csan-generate --cpu) or when there is no GPU.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace csan::nn {

torch::Device compute_device(bool force_cpu, int64_t local_rank = 0);

// "cpu" or "cuda" as a user names it (`option` names the setting in errors): a csan::Error
// of kind bad_option for another name, or for cuda where LibTorch sees no GPU.
torch::Device named_device(const std::string& name, const std::string& option = "device");

// The device a module's parameters live on (the CPU for a module without any).
torch::Device device_of(const torch::nn::Module& module);

// "cpu" or "cuda:0 (1 GPU(s) visible)", for logs.
std::string describe_device(const torch::Device& device);

}  // namespace csan::nn
