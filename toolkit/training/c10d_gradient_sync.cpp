#include "toolkit/training/c10d_gradient_sync.h"

// LibTorch's c10d headers declare the Gloo (and NCCL) process groups only when told the
// library was built with them. Debian's 1.13 and the official 2.x builds have Gloo; NCCL
// only in CUDA builds, where CMake defines USE_C10D_NCCL (CsanDependencies.cmake).
#if !defined(USE_C10D_GLOO) && __has_include(<gloo/config.h>) && __has_include(<gloo/algorithm.h>)
#define USE_C10D_GLOO
#endif
// A pip-installed torch declares Gloo (USE_C10D_GLOO) but ships only part of its headers.
#if defined(USE_C10D_GLOO) && !__has_include(<gloo/algorithm.h>)
#undef USE_C10D_GLOO
#endif

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "toolkit/core/error.h"
#include "toolkit/training/distributed_buckets.h"

namespace csan::training {

namespace {

using Milliseconds = std::chrono::milliseconds;

// LibTorch 2.x split ProcessGroup into a front end and per-device Backends; the Gloo
// and NCCL classes are Backends there and ProcessGroups in 1.x. Both expose the same
// allreduce(tensors, opts) -> Work, which is all this file calls.
#if TORCH_VERSION_MAJOR >= 2
using Collectives = c10d::Backend;
#else
using Collectives = c10d::ProcessGroup;
#endif

// c10::Error::what() carries a C++ backtrace; the message is its first line.
std::string first_line(const std::exception& e) {
  std::string text;
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e))
    text = c10->what_without_backtrace();
  else
    text = e.what();
  const auto newline = text.find('\n');
  return newline == std::string::npos ? text : text.substr(0, newline);
}

// c10d logs each failed connection attempt to stderr itself; the csan::Error it becomes
// says the same in one line, so those logs are held back while connecting.
class QuietC10dLogs {
 public:
#ifdef C10_USE_GLOG
  QuietC10dLogs() : saved_(FLAGS_minloglevel) { FLAGS_minloglevel = std::max(saved_, 3); }
  ~QuietC10dLogs() { FLAGS_minloglevel = saved_; }

 private:
  int saved_;
#endif
};

std::string seconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", seconds);
  return buf;
}

}  // namespace

struct C10dGradientSync::Impl {
  DistributedSetup setup;
  torch::Device device;
  std::string backend;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Collectives> group;
  std::vector<GradientBucket> buckets;
  size_t planned_for = 0;  // number of parameters the bucket plan was made for
  int64_t grad_reductions = 0;

  Impl(const DistributedSetup& s, torch::Device d) : setup(s), device(d) {}

  std::string who() const { return "rank " + std::to_string(setup.rank) + " of " + std::to_string(setup.world_size); }

  void connect() {
    [[maybe_unused]] const QuietC10dLogs quiet;  // empty where LibTorch logs without glog
    const auto timeout = Milliseconds(static_cast<int64_t>(setup.timeout_seconds * 1000));
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(setup.master_port);
    options.isServer = setup.rank == 0 && !setup.rank0_is_store_client;
    options.waitWorkers = false;  // the process group's rendezvous waits for everyone
    // The store's connect loop counts whole seconds: below one it would not try at all.
    options.timeout = std::max(timeout, Milliseconds(1000));
    const std::string where = setup.master_addr + ":" + std::to_string(setup.master_port);
    try {
      auto tcp = c10::make_intrusive<c10d::TCPStore>(setup.master_addr, options);
      store = c10::make_intrusive<c10d::PrefixStore>("csan", tcp);
    } catch (const std::exception& e) {
      throw Error(who() + ": cannot " + std::string(options.isServer ? "host" : "reach") + " the rendezvous store at " +
                  where + " within " + seconds_text(setup.timeout_seconds) + " (" + setup.source +
                  "): " + first_line(e));
    }
    try {
      create_group(timeout);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(who() + ": rendezvous at " + where + " did not complete within " +
                  seconds_text(setup.timeout_seconds) + " (are all " + std::to_string(setup.world_size) +
                  " workers running?): " + first_line(e));
    }
  }

  void create_group(Milliseconds timeout) {
    backend = setup.backend == "auto" ? (device.is_cuda() ? "nccl" : "gloo") : setup.backend;
    if (backend == "nccl") {
#ifdef USE_C10D_NCCL
      if (!device.is_cuda()) throw Error("distributed_training.distributed_backend nccl needs the model on CUDA");
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      group = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, setup.rank, setup.world_size, options);
      return;
#else
      throw Error::for_key("distributed_training.distributed_backend",
                           "nccl is not available in this LibTorch build (no CUDA); use gloo");
#endif
    }
#ifdef USE_C10D_GLOO
    if (device.is_cuda()) throw Error("the gloo backend here reduces CPU tensors; use nccl for a CUDA model");
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    // On one machine everything stays on loopback; across machines Gloo binds to the
    // interface named by GLOO_SOCKET_IFNAME, or the one this host's name resolves to.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"))
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (setup.master_addr == "127.0.0.1" || setup.master_addr == "localhost")
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    options->threads = 2;
    group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, setup.rank, setup.world_size, options);
#else
    throw Error("this LibTorch build has no Gloo process group");
#endif
  }

  // Survivors of a failed collective check in at the store; whoever has not checked in
  // after a short grace period is named as dead or hung. If the store itself is gone,
  // rank 0 (its host) is the one that died.
  [[noreturn]] void fail(const std::string& what, const std::exception& cause) {
    const std::string reason = first_line(cause);
    [[maybe_unused]] const QuietC10dLogs quiet;  // empty where LibTorch logs without glog
    std::string culprits;
    try {
      const auto grace = std::chrono::duration<double>(std::min(setup.timeout_seconds, 3.0));
      store->setTimeout(Milliseconds(static_cast<int64_t>(grace.count() * 1000) + 1));
      store->set("failed/" + std::to_string(setup.rank), std::vector<uint8_t>{1});
      const auto deadline = std::chrono::steady_clock::now() + grace;
      std::vector<int> missing;
      do {
        missing.clear();
        for (int r = 0; r < setup.world_size; ++r)
          if (r != setup.rank && !store->check({"failed/" + std::to_string(r)})) missing.push_back(r);
        if (missing.empty()) break;
        std::this_thread::sleep_for(Milliseconds(50));
      } while (std::chrono::steady_clock::now() < deadline);
      for (int r : missing) culprits += (culprits.empty() ? "" : ", ") + std::to_string(r);
      culprits = missing.empty() ? "every rank is still up (a collective mismatch?)"
                                 : std::string(missing.size() > 1 ? "ranks " : "rank ") + culprits +
                                       " stopped answering (died or hung)";
    } catch (const std::exception&) {
      culprits = "rank 0 stopped answering (died or hung; it hosts the rendezvous store)";
    }
    throw Error(who() + ": " + what + " failed: " + culprits + " [timeout " + seconds_text(setup.timeout_seconds) +
                "; " + reason + "]");
  }
};

C10dGradientSync::C10dGradientSync(const DistributedSetup& setup, torch::Device device)
    : impl_(std::make_unique<Impl>(setup, device)) {
  if (setup.world_size < 1 || setup.rank < 0 || setup.rank >= setup.world_size)
    throw Error("invalid distributed setup: rank " + std::to_string(setup.rank) + " of " +
                std::to_string(setup.world_size));
  // Gloo writes to its peers with writev, so a write to a peer that has just died raised
  // SIGPIPE and killed this rank silently (status 141) before the failed collective could
  // name the dead one. Ignored, the write fails with EPIPE and the error names the peer;
  // Python, PyTorch's usual host, ignores SIGPIPE from start-up. A closed standard output
  // is still caught by its failed writes (core/checked_output).
  std::signal(SIGPIPE, SIG_IGN);
  impl_->connect();
}

C10dGradientSync::~C10dGradientSync() = default;

int C10dGradientSync::rank() const { return impl_->setup.rank; }
int C10dGradientSync::world_size() const { return impl_->setup.world_size; }
const std::string& C10dGradientSync::backend_name() const { return impl_->backend; }

void C10dGradientSync::all_reduce_grads(const std::vector<torch::Tensor>& params) {
  auto& s = *impl_;
  ++s.grad_reductions;
  if (s.planned_for != params.size() || s.buckets.empty()) {
    s.buckets = plan_gradient_buckets(params, static_cast<int64_t>(s.setup.bucket_cap_mb * 1024 * 1024));
    s.planned_for = params.size();
  }
  // All buckets are in flight at once; each is copied back as soon as it is done.
  std::vector<c10::intrusive_ptr<c10d::Work>> works;
  try {
    for (auto& bucket : s.buckets) {
      flatten_gradients(bucket, params);
      std::vector<at::Tensor> tensors{bucket.buffer};
      works.push_back(s.group->allreduce(tensors));
    }
    for (size_t b = 0; b < works.size(); ++b) {
      works[b]->wait();
      unflatten_gradients(s.buckets[b], params);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    s.fail("gradient all-reduce of update attempt " + std::to_string(s.grad_reductions), e);
  }
}

void C10dGradientSync::all_reduce_sums(std::vector<double>& values) {
  auto& s = *impl_;
  if (values.empty()) return;
  auto sums = torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64)).to(s.device);
  try {
    std::vector<at::Tensor> tensors{sums};
    s.group->allreduce(tensors)->wait();
  } catch (const std::exception& e) {
    s.fail("statistics all-reduce after update attempt " + std::to_string(s.grad_reductions), e);
  }
  auto host = sums.to(torch::kCPU);
  const double* data = host.data_ptr<double>();
  std::copy(data, data + values.size(), values.begin());
}

}  // namespace csan::training
