// Precision policies: fp32 master weights behind a low-precision model (tested on CPU
// with bfloat16 storage; fp16 uses the same code on CUDA), the loss scaler wired into the
// trainer, checkpoint round trips, the autocast guard, bf16 autocast training against
// fp32, and the clear errors for fp16/amp without CUDA.
#include "toolkit/training/precision.h"

#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "tests/support/cpuinfo_flags.h"
#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/core/error.h"
#include "toolkit/core/remove_tree.h"
#include "toolkit/training/autocast_guard.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/precision_master_weights.h"
#include "toolkit/training/trainer.h"
#include "toy_training.h"

namespace csan::training {
namespace {

using namespace csan::checkpoint;

using testing::kEos;
using testing::kPad;
using testing::kVocab;

// Like testing::ToyModel, but every intermediate follows the weights' dtype, so the
// whole model can be stored in bfloat16.
class LowPrecisionToyModel : public models::EncoderDecoderModel {
 public:
  LowPrecisionToyModel(int64_t vocab, int64_t dim) {
    embed_ = register_module("embed", torch::nn::Embedding(vocab, dim));
    hidden_ = register_module("hidden", torch::nn::Linear(2 * dim, dim));
    out_ = register_module("out", torch::nn::Linear(dim, vocab));
  }
  models::EncoderOut encode(const models::NamedTensors& input) override {
    const auto& src_tokens = input.at("src_tokens");
    return {embed_(src_tokens), src_tokens.eq(kPad)};
  }
  torch::Tensor decode(const torch::Tensor& prev, const models::EncoderOut& enc, nn::IncrementalState*) override {
    const auto& memory = enc.at("encoder");
    auto keep = memory.padding_mask.logical_not().unsqueeze(-1).to(memory.out.scalar_type());
    auto pooled = (memory.out * keep).sum(1) / keep.sum(1);
    auto x = embed_(prev);
    x = torch::cat({x, pooled.unsqueeze(1).expand_as(x)}, -1);
    return out_(torch::relu(hidden_(x)));
  }
  int64_t max_source_positions() const override { return 1024; }
  int64_t max_target_positions() const override { return 1024; }

 private:
  torch::nn::Embedding embed_{nullptr};
  torch::nn::Linear hidden_{nullptr}, out_{nullptr};
};

// The trainer with `precision`, building the optimizer over its optimizer_params() as
// the train loop does.
Trainer make_precision_trainer(std::shared_ptr<models::Model> model, std::unique_ptr<PrecisionPolicy> precision) {
  auto cfg = testing::toy_training_config();
  TrainerParts parts;
  parts.model = std::move(model);
  parts.precision = std::move(precision);
  parts.precision->prepare_model(*parts.model);
  parts.optimizer = build_optimizer(parts.precision->optimizer_params(unique_parameters(*parts.model)), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = build_criterion(cfg, kPad);
  parts.sync = std::make_unique<LocalGradientSync>();
  parts.clip_norm = 1.0;
  return Trainer(std::move(parts));
}

std::unique_ptr<MasterWeightsPrecision> bf16_masters(double init_scale, int64_t window = 2000) {
  LossScalerOptions o;
  o.init_scale = init_scale;
  o.scale_window = window;
  return std::make_unique<MasterWeightsPrecision>("bf16-masters", torch::kBFloat16, o);
}

TensorBatch make_precision_batch(int index, int sentences = 4) { return testing::toy_batch(index, sentences); }

std::vector<torch::Tensor> clones(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& t : tensors) out.push_back(t.detach().clone());
  return out;
}

TEST(MasterWeights, ModelStaysLowPrecisionWhileMastersStayFp32) {
  torch::manual_seed(3);
  auto policy = bf16_masters(128);
  auto* masters = policy.get();
  auto trainer = make_precision_trainer(std::make_shared<LowPrecisionToyModel>(kVocab, 8), std::move(policy));
  for (int step = 0; step < 5; ++step) ASSERT_FALSE(trainer.train_step({make_precision_batch(step)}).skipped);
  ASSERT_EQ(masters->master_params().size(), trainer.params().size());
  for (size_t i = 0; i < trainer.params().size(); ++i) {
    const auto& model_param = trainer.params()[i];
    const auto& master = masters->master_params()[i];
    EXPECT_EQ(model_param.scalar_type(), torch::kBFloat16) << i;
    EXPECT_EQ(master.scalar_type(), torch::kFloat) << i;
    ASSERT_TRUE(master.grad().defined()) << i;
    EXPECT_EQ(master.grad().scalar_type(), torch::kFloat) << i;
    // The model holds the masters' rounding, and the masters carry more than that.
    EXPECT_TRUE(torch::equal(model_param, master.to(torch::kBFloat16))) << i;
  }
  bool masters_finer = false;
  for (const auto& m : masters->master_params())
    masters_finer |= !torch::equal(m, m.to(torch::kBFloat16).to(torch::kFloat));
  EXPECT_TRUE(masters_finer) << "fp32 masters should not be exactly representable in bf16 after updates";
}

// The same (scaled) gradients give the same update as plain fp32 Adam: unscaling by a
// power of two is exact, and the step runs on the fp32 copy.
TEST(MasterWeights, UpdateEqualsTheFp32UpdateOfTheSameGradients) {
  torch::manual_seed(7);
  torch::nn::Linear low(6, 4), reference(6, 4);
  const double scale = 1024;
  MasterWeightsPrecision policy("bf16-masters", torch::kBFloat16, LossScalerOptions{scale, 2.0, 2000, 0.0, {}, 1e-4});
  policy.prepare_model(*low);
  const auto params = unique_parameters(*low);
  const auto masters = policy.optimizer_params(params);
  const auto ref_params = unique_parameters(*reference);
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) ref_params[i].copy_(params[i]);  // the same (bf16) start
  }
  torch::optim::Adam optimizer(masters, torch::optim::AdamOptions(1e-2));
  torch::optim::Adam ref_optimizer(ref_params, torch::optim::AdamOptions(1e-2));
  for (int step = 0; step < 4; ++step) {
    optimizer.zero_grad();
    ref_optimizer.zero_grad();
    for (size_t i = 0; i < params.size(); ++i) {
      auto grad = torch::randn(params[i].sizes()).to(torch::kBFloat16);  // what a bf16 backward yields
      params[i].mutable_grad() = grad * scale;                           // ... of the scaled loss
      ref_params[i].mutable_grad() = grad.to(torch::kFloat);
    }
    policy.unscale_grads(params, 0.25);
    multiply_grads(ref_params, 0.25);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_FALSE(params[i].grad().defined()) << "model gradients are consumed, the next update starts at zero";
      EXPECT_TRUE(torch::equal(masters[i].grad(), ref_params[i].grad())) << "step " << step << " param " << i;
    }
    optimizer.step();
    ref_optimizer.step();
    policy.after_update(false);
    policy.after_step();
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::allclose(masters[i], ref_params[i], 1e-6, 1e-7)) << "step " << step << " param " << i;
      EXPECT_TRUE(torch::equal(params[i], masters[i].to(torch::kBFloat16)));
    }
  }
}

TEST(MasterWeights, OverflowSkipsTheUpdateAndHalvesTheScaleInTheTrainer) {
  torch::manual_seed(5);
  const double huge = std::ldexp(1.0, 130);  // loss * scale overflows fp32
  auto policy = bf16_masters(huge);
  auto* masters = policy.get();
  auto trainer = make_precision_trainer(std::make_shared<LowPrecisionToyModel>(kVocab, 8), std::move(policy));
  const auto before = clones(trainer.params());
  const auto masters_before = clones(masters->master_params());
  auto r = trainer.train_step({make_precision_batch(0)});
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.loss_scale, std::ldexp(1.0, 129));
  EXPECT_EQ(trainer.num_updates(), 0);
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(torch::equal(before[i], trainer.params()[i]));
    EXPECT_TRUE(torch::equal(masters_before[i], masters->master_params()[i]));
  }

  int skipped = 1;
  while (r.skipped && skipped < 40) {
    r = trainer.train_step({make_precision_batch(skipped)});
    skipped += r.skipped;
  }
  ASSERT_FALSE(r.skipped) << "the scale should fall until gradients are finite";
  EXPECT_TRUE(std::isfinite(r.gnorm));
  EXPECT_LT(r.loss_scale, huge);
  EXPECT_EQ(trainer.num_updates(), 1);
  // The first update runs at warmup_init_lr (0): the second one moves the weights.
  ASSERT_FALSE(trainer.train_step({make_precision_batch(50)}).skipped);
  bool changed = false;
  for (size_t i = 0; i < before.size(); ++i) changed |= !torch::equal(before[i], trainer.params()[i]);
  EXPECT_TRUE(changed);
}

std::string precision_temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("csan-precision-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void save_precision_checkpoint(Trainer& t, const std::string& path) {
  CheckpointWriter writer;
  CheckpointMeta meta;
  meta.recipe_yaml = "model:\n  arch: toy\n";
  writer.set_meta(meta);
  TrainingProgress progress;
  progress.num_updates = t.num_updates();
  writer.set_progress(progress);
  t.save_state(writer);
  writer.write(path);
}

// Resuming restores the loss scale with its counters and the fp32 masters (not their
// bf16 rounding): the resumed trainer continues bit-identically.
TEST(MasterWeights, CheckpointRestoresScalerAndMastersExactly) {
  const std::string path = precision_temp_path("masters.pt");
  torch::manual_seed(11);
  auto first_policy = bf16_masters(64, /*window=*/3);
  auto* first_masters = first_policy.get();
  auto first = make_precision_trainer(std::make_shared<LowPrecisionToyModel>(kVocab, 8), std::move(first_policy));
  for (int step = 0; step < 4; ++step) first.train_step({make_precision_batch(step)});
  save_precision_checkpoint(first, path);
  const double scale_at_save = first.precision().loss_scale();
  EXPECT_EQ(scale_at_save, 64 * 2) << "doubled once after 3 clean updates";

  torch::manual_seed(99);  // other initial weights: everything must come from the checkpoint
  auto second_policy = bf16_masters(1, /*window=*/3);
  auto* second_masters = second_policy.get();
  auto second = make_precision_trainer(std::make_shared<LowPrecisionToyModel>(kVocab, 8), std::move(second_policy));
  CheckpointReader reader(path);
  second.load_state(reader);
  EXPECT_EQ(second.precision().loss_scale(), scale_at_save);
  for (size_t i = 0; i < first_masters->master_params().size(); ++i)
    EXPECT_TRUE(torch::equal(first_masters->master_params()[i], second_masters->master_params()[i])) << i;

  for (int step = 4; step < 8; ++step) {
    auto a = first.train_step({make_precision_batch(step)});
    auto b = second.train_step({make_precision_batch(step)});
    EXPECT_EQ(a.loss_scale, b.loss_scale) << "step " << step;
    EXPECT_EQ(a.stats.loss_sum, b.stats.loss_sum) << "step " << step;
  }
  EXPECT_EQ(second.precision().loss_scale(), 64 * 4) << "the window counter continued from the checkpoint";
  for (size_t i = 0; i < first.params().size(); ++i) {
    EXPECT_TRUE(torch::equal(first.params()[i], second.params()[i])) << i;
    EXPECT_TRUE(torch::equal(first_masters->master_params()[i], second_masters->master_params()[i])) << i;
  }
  remove_tree(std::filesystem::path(path).parent_path().string());
}

// The EMA of a low-precision run: what it averages are the fp32 weights the optimizer
// steps (fairseq's --ema-fp32), the masters where the model holds bf16 copies of them.
constexpr double kEmaDecay = 0.75;
constexpr int64_t kEmaStart = 2;
const EmaOptions kEma{true, kEmaDecay, kEmaStart, /*update_freq=*/1, false, /*seed_model=*/""};

std::vector<torch::Tensor> stepped_weights(Trainer& t) {
  if (auto* masters = dynamic_cast<MasterWeightsPrecision*>(&t.precision())) return clones(masters->master_params());
  return clones(t.params());
}

// Trains updates [from, to), checking after each that the EMA is the formula's average
// of stepped_weights(); `expected` carries that average.
void train_checking_ema(Trainer& t, std::vector<torch::Tensor>& expected, int from, int to) {
  for (int step = from; step < to; ++step) {
    ASSERT_FALSE(t.train_step({make_precision_batch(step)}).skipped);
    const auto weights = stepped_weights(t);
    for (size_t i = 0; i < expected.size(); ++i) {
      if (t.num_updates() < kEmaStart)
        expected[i] = weights[i];
      else
        expected[i].mul_(kEmaDecay).add_(weights[i], 1.0 - kEmaDecay);
      ASSERT_EQ(t.ema()->averages()[i].scalar_type(), torch::kFloat);
      ASSERT_TRUE(torch::equal(t.ema()->averages()[i], expected[i]))
          << "update " << t.num_updates() << ", tensor " << i;
    }
  }
}

// 4 updates checked against the formula, saved, and resumed by a trainer of other initial
// weights (`make` takes the seed); both go on for 4 updates and end bit-identical: weights,
// masters and EMA. Returns the uninterrupted trainer.
Trainer expect_ema_by_formula_and_exact_resume(const std::function<Trainer(uint64_t seed)>& make) {
  const std::string path = precision_temp_path("ema.pt");
  auto first = make(11);
  first.enable_ema(kEma);
  auto expected = stepped_weights(first);
  train_checking_ema(first, expected, 0, 4);
  save_precision_checkpoint(first, path);
  auto second = make(99);
  second.enable_ema(kEma);
  CheckpointReader reader(path);
  second.load_state(reader);
  auto expected_second = clones(expected);
  train_checking_ema(first, expected, 4, 8);
  train_checking_ema(second, expected_second, 4, 8);
  const auto a = stepped_weights(first), b = stepped_weights(second);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << i;
    EXPECT_TRUE(torch::equal(first.params()[i], second.params()[i])) << i;
    EXPECT_TRUE(torch::equal(first.ema()->averages()[i], second.ema()->averages()[i])) << i;
  }
  remove_tree(std::filesystem::path(path).parent_path().string());
  return first;
}

TEST(MasterWeights, EmaAveragesTheFp32MastersAndResumesBitIdentically) {
  auto trainer = expect_ema_by_formula_and_exact_resume([](uint64_t seed) {
    torch::manual_seed(seed);
    return make_precision_trainer(std::make_shared<LowPrecisionToyModel>(kVocab, 8), bf16_masters(64, /*window=*/3));
  });
  // The masters the EMA follows are not the model's bf16 weights (else the test could not
  // tell them apart).
  const auto masters = stepped_weights(trainer);
  bool differ = false;
  for (size_t i = 0; i < masters.size(); ++i)
    differ |= !torch::equal(masters[i], trainer.params()[i].to(torch::kFloat));
  EXPECT_TRUE(differ);
}

TEST(Bf16Autocast, EmaAveragesTheFp32WeightsAndResumesBitIdentically) {
  auto trainer = expect_ema_by_formula_and_exact_resume([](uint64_t seed) {
    torch::manual_seed(seed);
    return make_precision_trainer(std::make_shared<testing::ToyModel>(kVocab, 16, 0.0), make_precision_policy("bf16"));
  });
  for (const auto& p : trainer.params()) EXPECT_EQ(p.scalar_type(), torch::kFloat);
}

TEST(AutocastGuard, RunsMatrixProductsInBf16AndRestoresTheState) {
  auto a = torch::randn({4, 8}), b = torch::randn({8, 3});
  EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
  const AutocastSpec bf16{true, torch::kCPU, torch::kBFloat16};
  {
    AutocastGuard outer(bf16);
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
    {
      AutocastGuard inner(bf16);
      AutocastGuard off{AutocastSpec{}};  // disabled: changes nothing
      EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
    }
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16) << "leaving the inner scope keeps the outer one";
    // The criterion's log-softmax is asked for fp32 explicitly and stays fp32.
    EXPECT_EQ(torch::log_softmax(torch::mm(a, b), -1, torch::kFloat).scalar_type(), torch::kFloat);
  }
  EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
  EXPECT_FALSE(at::autocast::is_cpu_enabled());
}

// common.precision parses once into the enum: every name back to its value, and an
// unknown one is an error naming the key and the known names.
TEST(PrecisionFactory, TrainingPrecisionsParseFromTheirOwnNames) {
  for (const TrainingPrecision p : kTrainingPrecisions)
    EXPECT_EQ(parse_training_precision(training_precision_name(p)), p) << training_precision_name(p);
  try {
    parse_training_precision("fp8");
    FAIL() << "fp8 is no training precision";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("common.precision"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown precision 'fp8' (fp32, fp16, bf16, amp)"), std::string::npos) << what;
  }
}

// bf16 autocast keeps fp32 weights and learns like fp32 from the same start and batches.
TEST(Bf16Autocast, TrainsLikeFp32WithFp32Weights) {
  auto run = [](const std::string& precision) {
    torch::manual_seed(2);
    auto trainer =
        make_precision_trainer(std::make_shared<testing::ToyModel>(kVocab, 16, 0.0), make_precision_policy(precision));
    double first = 0, last = 0;
    for (int step = 0; step < 60; ++step) {
      auto r = trainer.train_step({make_precision_batch(step % 4)});
      EXPECT_FALSE(r.skipped);
      EXPECT_EQ(r.loss_scale, 0) << "no loss scaling in " << precision;
      if (step < 4) first += r.stats.loss_bits() / 4;
      if (step >= 56) last += r.stats.loss_bits() / 4;
    }
    for (const auto& p : trainer.params()) EXPECT_EQ(p.scalar_type(), torch::kFloat);
    return std::make_pair(first, last);
  };
  const auto fp32 = run("fp32");
  const auto bf16 = run("bf16");
  EXPECT_LT(fp32.second, 0.8 * fp32.first);
  EXPECT_NEAR(bf16.first, fp32.first, 0.02 * fp32.first);
  EXPECT_NEAR(bf16.second, fp32.second, 0.05 * fp32.second) << "fp32 " << fp32.second << " bf16 " << bf16.second;
  EXPECT_NE(bf16.second, fp32.second) << "bf16 autocast should have changed the arithmetic";
}

TEST(PrecisionFactory, Fp16AndAmpWithoutCudaSuggestBf16) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "CUDA is available here";
  for (const char* name : {"fp16", "amp"}) {
    try {
      make_precision_policy(name);
      FAIL() << name << " should need CUDA";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("common.precision"), std::string::npos) << what;
      EXPECT_NE(what.find("CUDA"), std::string::npos) << what;
      EXPECT_NE(what.find("--precision bf16"), std::string::npos) << what;
    }
  }
  EXPECT_THROW(make_precision_policy("fp64"), Error);
  EXPECT_EQ(make_precision_policy("bf16")->name(), "bf16");
}

TEST(PrecisionFactory, ScaleWindowDefaultsToFairseqsFormula) {
  auto cfg = testing::toy_training_config();
  EXPECT_EQ(loss_scaler_options(cfg, 1).scale_window, 16384);
  cfg.set("optimization.update_freq", int64_t{3});
  EXPECT_EQ(loss_scaler_options(cfg, 2).scale_window, 2730);  // int(2^14 / 2 / 3)
  cfg.set("common.fp16_scale_window", int64_t{100});
  cfg.set("common.threshold_loss_scale", 0.5);
  const auto o = loss_scaler_options(cfg, 2);
  EXPECT_EQ(o.scale_window, 100);
  EXPECT_EQ(o.init_scale, 128);
  EXPECT_EQ(o.min_loss_scale, 1e-4);
  EXPECT_EQ(o.tolerance, 0);
  ASSERT_TRUE(o.threshold.has_value());
  EXPECT_EQ(*o.threshold, 0.5);
}

}  // namespace
}  // namespace csan::training

// The bf16 speed warning follows the CPU's own flags (Linux names the instruction sets
// avx512_bf16 and amx_bf16 in /proc/cpuinfo).
TEST(PrecisionSpeedWarning, Bf16WarnsExactlyWhenTheCpuLacksNativeBf16) {
  const auto flags = csan::testing::cpuinfo_flags();
  if (!flags) GTEST_SKIP() << "no /proc/cpuinfo";
  const bool listed =
      flags->find(" avx512_bf16 ") != std::string::npos || flags->find(" amx_bf16 ") != std::string::npos;
  EXPECT_EQ(csan::training::cpu_has_native_bf16(), listed);
  const torch::Device cpu(torch::kCPU);
  EXPECT_EQ(csan::training::precision_speed_warning("bf16", cpu).empty(), listed);
  // fp32 gets the opposite: a hint to use bf16 exactly where it is native.
  EXPECT_EQ(csan::training::precision_speed_warning("fp32", cpu).empty(), !listed);
}

// Both sides of the CPU test, whatever this machine is: a warning for emulated bf16, a
// one-line hint for fp32 where bf16 is native, nothing for other precisions or devices.
TEST(PrecisionSpeedWarning, HintsBf16ForFp32OnlyWhereBf16IsNative) {
  using csan::training::precision_speed_warning;
  const torch::Device cpu(torch::kCPU);
  using csan::training::TrainingPrecision;
  const std::string hint = precision_speed_warning(TrainingPrecision::fp32, cpu, true);
  EXPECT_EQ(hint.rfind("hint: ", 0), 0u) << hint;
  EXPECT_NE(hint.find("--precision bf16"), std::string::npos) << hint;
  EXPECT_EQ(hint.find('\n'), std::string::npos) << hint;
  EXPECT_TRUE(precision_speed_warning(TrainingPrecision::fp32, cpu, false).empty());
  EXPECT_EQ(precision_speed_warning(TrainingPrecision::bf16, cpu, false).rfind("warning: ", 0), 0u);
  EXPECT_TRUE(precision_speed_warning(TrainingPrecision::bf16, cpu, true).empty());
  EXPECT_TRUE(precision_speed_warning(TrainingPrecision::fp16, cpu, true).empty());
  EXPECT_TRUE(precision_speed_warning(TrainingPrecision::fp32, torch::Device(torch::kCUDA, 0), true).empty());
}
