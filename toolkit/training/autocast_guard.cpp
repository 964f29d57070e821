#include "toolkit/training/autocast_guard.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include "toolkit/core/error.h"

// LibTorch 2.4 replaced the per-device autocast functions (is_cpu_enabled, ...) by ones
// taking the device type, and deprecated the old ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define CSAN_AUTOCAST_DEVICE_TYPE_API 1
#endif

namespace csan::training {

namespace {

bool autocast_enabled(torch::DeviceType device) {
#ifdef CSAN_AUTOCAST_DEVICE_TYPE_API
  return at::autocast::is_autocast_enabled(device);
#else
  return device == torch::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

void set_autocast_enabled(torch::DeviceType device, bool enabled) {
#ifdef CSAN_AUTOCAST_DEVICE_TYPE_API
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == torch::kCUDA)
    at::autocast::set_enabled(enabled);
  else
    at::autocast::set_cpu_enabled(enabled);
#endif
}

torch::ScalarType autocast_dtype(torch::DeviceType device) {
#ifdef CSAN_AUTOCAST_DEVICE_TYPE_API
  return at::autocast::get_autocast_dtype(device);
#else
  return device == torch::kCUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

void set_autocast_dtype(torch::DeviceType device, torch::ScalarType dtype) {
#ifdef CSAN_AUTOCAST_DEVICE_TYPE_API
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == torch::kCUDA)
    at::autocast::set_autocast_gpu_dtype(dtype);
  else
    at::autocast::set_autocast_cpu_dtype(dtype);
#endif
}

void check_device(torch::DeviceType device) {
  if (device != torch::kCPU && device != torch::kCUDA) throw Error("autocast: only CPU and CUDA devices are supported");
}

}  // namespace

AutocastGuard::AutocastGuard(const AutocastSpec& spec) : spec_(spec) {
  if (!spec_.enabled) return;
  check_device(spec_.device);
  previous_enabled_ = autocast_enabled(spec_.device);
  previous_dtype_ = autocast_dtype(spec_.device);
  set_autocast_enabled(spec_.device, true);
  set_autocast_dtype(spec_.device, spec_.dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!spec_.enabled) return;
  // The cache holds low-precision copies of the weights for one forward pass.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(spec_.device, previous_enabled_);
  set_autocast_dtype(spec_.device, previous_dtype_);
}

}  // namespace csan::training
