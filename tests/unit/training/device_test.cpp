// Where training computes. Everywhere: the device choice (--cpu, no GPU, a worker's GPU)
// and optimizer state following its parameters. On a machine whose LibTorch sees a CUDA
// GPU (skipped elsewhere, CI among them): an update on the GPU matches the CPU's, a
// checkpoint written there resumes there and loads on the CPU, and amp trains.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/trainer.h"
#include "toy_training.h"

namespace csan::training {
namespace {

using testing::kPad;
using testing::kVocab;

TEST(ComputeDevice, CpuWhenAskedOrWithoutAGpuAndOtherwiseTheWorkersGpu) {
  EXPECT_EQ(nn::compute_device(/*force_cpu=*/true, 0), torch::Device(torch::kCPU));
  EXPECT_EQ(nn::compute_device(true, 3), torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(nn::compute_device(false, 1), torch::Device(torch::kCPU));
    return;
  }
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  EXPECT_EQ(nn::compute_device(false, 0), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(nn::compute_device(false, gpus + 1), torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(1 % gpus)));
}

TEST(ComputeDevice, AModuleIsWhereItsParametersAre) {
  testing::ToyModel model(kVocab, 4, 0.0);
  EXPECT_EQ(nn::device_of(model), torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) return;
  model.to(torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(nn::device_of(model), torch::Device(torch::kCUDA, 0));
}

// Every state tensor of each optimizer moves (the meta device stands in for a GPU: only
// the tensors move, which LibTorch 2.x allows for meta, unlike whole modules).
TEST(OptimizerState, MovesToTheDeviceOfItsParameters) {
  for (const char* name : {"adam", "adamw", "rmsprop"}) {
    auto cfg = testing::toy_training_config();
    cfg.set("optimizer.name", std::string(name));
    torch::Tensor w = torch::ones({3}, torch::requires_grad());
    auto optimizer = build_optimizer({w}, cfg);
    (w * w).sum().backward();
    optimizer->step();
    move_optimizer_state(*optimizer, torch::kMeta);
    int moved = 0;
    for (auto& entry : optimizer->state()) {
      auto* state = entry.second.get();
      std::vector<torch::Tensor> tensors;
      if (auto* s = dynamic_cast<torch::optim::AdamParamState*>(state))
        tensors = {s->exp_avg(), s->exp_avg_sq(), s->max_exp_avg_sq()};
      if (auto* s = dynamic_cast<torch::optim::AdamWParamState*>(state)) tensors = {s->exp_avg(), s->exp_avg_sq()};
      if (auto* s = dynamic_cast<torch::optim::RMSpropParamState*>(state)) tensors = {s->square_avg()};
      for (const auto& t : tensors) {
        if (!t.defined()) continue;  // amsgrad's maximum, off here
        EXPECT_TRUE(t.is_meta()) << name;
        ++moved;
      }
    }
    EXPECT_GE(moved, std::string(name) == "rmsprop" ? 1 : 2) << name;
  }
}

// ---- on a CUDA GPU

const torch::Device kGpu(torch::kCUDA, 0);

#define SKIP_WITHOUT_GPU() \
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU here"

Trainer make_device_trainer(const torch::Device& device, const std::string& precision = "fp32", double dropout = 0.0) {
  torch::manual_seed(7);
  auto cfg = testing::toy_training_config();
  TrainerParts parts;
  parts.model = std::make_shared<testing::ToyModel>(kVocab, 16, dropout);
  parts.model->to(device);
  parts.precision = make_precision_policy(precision);
  parts.precision->prepare_model(*parts.model);
  parts.optimizer = build_optimizer(parts.precision->optimizer_params(unique_parameters(*parts.model)), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = build_criterion(cfg, kPad);
  parts.sync = std::make_unique<LocalGradientSync>();
  parts.clip_norm = 1.0;
  return Trainer(std::move(parts));
}

std::vector<torch::Tensor> on_cpu(const Trainer& t) {
  std::vector<torch::Tensor> out;
  for (const auto& p : t.params()) out.push_back(p.detach().to(torch::kCPU).clone());
  return out;
}

void expect_close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double tolerance) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], tolerance, tolerance)) << "parameter " << i;
}

std::string device_temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("csan-device-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

TEST(Gpu, UpdatesMatchTheCpus) {
  SKIP_WITHOUT_GPU();
  Trainer cpu = make_device_trainer(torch::kCPU), gpu = make_device_trainer(kGpu);
  EXPECT_EQ(gpu.device(), kGpu);
  expect_close(on_cpu(cpu), on_cpu(gpu), 0);  // drawn on the CPU, then moved
  for (int i = 0; i < 3; ++i) {
    const auto batch = testing::toy_batch(i, 4);
    const auto a = cpu.train_step({batch}), b = gpu.train_step({batch});
    EXPECT_NEAR(a.stats.loss_sum, b.stats.loss_sum, 1e-4 * std::abs(a.stats.loss_sum));
    EXPECT_NEAR(a.gnorm, b.gnorm, 1e-4 * a.gnorm);
  }
  expect_close(on_cpu(cpu), on_cpu(gpu), 1e-5);
  const auto valid = gpu.valid_step(testing::toy_batch(9, 3));
  EXPECT_NEAR(valid.loss_sum, cpu.valid_step(testing::toy_batch(9, 3)).loss_sum, 1e-4 * valid.loss_sum);
}

TEST(Gpu, ACheckpointWrittenThereResumesThereAndLoadsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  Trainer gpu = make_device_trainer(kGpu, "fp32", /*dropout=*/0.3);
  for (int i = 0; i < 2; ++i) gpu.train_step({testing::toy_batch(i, 4)});
  const std::string path = device_temp_path("gpu.pt");
  {
    checkpoint::CheckpointWriter writer;
    checkpoint::CheckpointMeta meta;
    meta.task = "toy";
    meta.recipe_yaml = "{}";
    writer.set_meta(meta);
    writer.set_progress({0, 0, gpu.num_updates(), 0, false, 0, 0});
    gpu.save_state(writer);
    writer.write(path);
  }
  gpu.train_step({testing::toy_batch(2, 4)});  // with dropout: draws from the GPU's generator

  Trainer resumed = make_device_trainer(kGpu, "fp32", 0.3);
  checkpoint::CheckpointReader reader(path);
  resumed.load_state(reader);
  resumed.train_step({testing::toy_batch(2, 4)});
  expect_close(on_cpu(gpu), on_cpu(resumed), 1e-6);  // same dropout masks, moments on the GPU

  Trainer cpu = make_device_trainer(torch::kCPU, "fp32", 0.3);
  checkpoint::CheckpointReader again(path);
  cpu.load_state(again);
  EXPECT_EQ(cpu.num_updates(), 2);
  cpu.train_step({testing::toy_batch(2, 4)});  // its moments came from the GPU onto the CPU
  remove_tree(std::filesystem::path(path).parent_path().string());
}

TEST(Gpu, AmpTrainsWithLossScaling) {
  SKIP_WITHOUT_GPU();
  Trainer amp = make_device_trainer(kGpu, "amp");
  const auto batch = testing::toy_batch(0, 4);
  const double first = amp.train_step({batch}).stats.loss_sum;
  UpdateResult last;
  for (int i = 0; i < 30; ++i) last = amp.train_step({batch});
  EXPECT_LT(last.stats.loss_sum, 0.7 * first);
  EXPECT_GT(last.loss_scale, 0);
}

}  // namespace
}  // namespace csan::training
