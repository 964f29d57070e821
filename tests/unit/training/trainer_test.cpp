#include "toolkit/training/trainer.h"

#include <caffe2/serialize/in_memory_adapter.h>
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/support/error_message.h"
#include "toolkit/checkpoint/archive_check.h"
#include "toolkit/checkpoint/checkpoint.h"
#include "toolkit/checkpoint/legacy_archive.h"
#include "toolkit/core/error.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/tasks/train_command.h"
#include "toolkit/training/optimizer.h"
#include "toolkit/training/restart_options.h"
#include "toolkit/training/weights_ema.h"
#include "toy_training.h"

namespace csan::training {
namespace {

using namespace csan::checkpoint;

using csan::testing::message_of;
using testing::kEos;
using testing::kPad;
using testing::kVocab;

core::Config training_config() {
  auto cfg = testing::toy_training_config();
  cfg.set("optimizer.weight_decay", 0.01);
  return cfg;
}

Trainer make_seeded_trainer(uint64_t init_seed, double dropout) {
  torch::manual_seed(init_seed);
  auto cfg = training_config();
  TrainerParts parts;
  parts.model = std::make_shared<testing::ToyModel>(kVocab, 8, dropout);
  parts.optimizer = build_optimizer(unique_parameters(*parts.model), cfg);
  parts.lr_scheduler = build_lr_scheduler(cfg);
  parts.criterion = build_criterion(cfg, kPad);
  parts.precision = std::make_unique<Fp32Precision>();
  parts.sync = std::make_unique<LocalGradientSync>();
  parts.clip_norm = 1.0;
  return Trainer(std::move(parts));
}

TensorBatch make_batch(int index, int sentences = 3) { return testing::toy_batch(index, sentences); }

std::vector<torch::Tensor> snapshot_params(Trainer& t) {
  std::vector<torch::Tensor> out;
  for (const auto& p : t.params()) out.push_back(p.detach().clone());
  return out;
}

bool bit_identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("csan-trainer-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// A format 2 checkpoint (a LibTorch archive) written by csan before format 3
// (tests/data/format2-tiny/README.txt says how): the crafted-archive tests edit it.
const std::string kFormat2Checkpoint = std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny/checkpoint.pt";

CheckpointMeta sample_meta() {
  CheckpointMeta meta;
  meta.task = "toy-task";
  meta.recipe_yaml = "model:\n  arch: toy\n";
  meta.data = {{"src_lang", "de"},
               {"tgt_lang", "en"},
               {"src_dict", "a 5\nb 3\n"},
               {"tgt_dict", "c 2\n"},
               {"spm_model", std::string("\x00\x01spm\xff", 6)}};
  return meta;
}

void save(Trainer& t, const std::string& path, TrainingProgress progress = {}) {
  CheckpointWriter writer;
  writer.set_meta(sample_meta());
  progress.num_updates = t.num_updates();
  writer.set_progress(progress);
  t.save_state(writer);
  writer.write(path);
}

TEST(Trainer, LossFallsWhenFittingAFewBatches) {
  auto trainer = make_seeded_trainer(1, 0.0);
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    auto r = trainer.train_step({make_batch(step % 4)});
    ASSERT_FALSE(r.skipped);
    if (step < 4) first += r.stats.loss_bits();
    if (step >= 56) last += r.stats.loss_bits();
  }
  EXPECT_EQ(trainer.num_updates(), 60);
  EXPECT_LT(last, 0.8 * first) << "first " << first / 4 << " last " << last / 4;
}

TEST(Trainer, UpdateFreqEqualsOneBigBatch) {
  // Gradients are summed over micro-batches and divided by the total target tokens, so
  // two micro-batches make the same update as their concatenation.
  auto a = make_seeded_trainer(5, 0.0), b = make_seeded_trainer(5, 0.0);
  a.train_step({make_batch(1, 2), make_batch(2, 2)});
  // The same four sentences in one batch.
  auto one = make_batch(1, 2), two = make_batch(2, 2);
  auto pad_to = [](const torch::Tensor& t, int64_t cols) {
    return torch::constant_pad_nd(t, {0, cols - t.size(1)}, kPad);
  };
  TensorBatch merged;
  auto field = [](const TensorBatch& b, const char* name) { return b.fields.at(name); };
  const int64_t s = std::max(field(one, "src_tokens").size(1), field(two, "src_tokens").size(1));
  const int64_t t = std::max(field(one, "target").size(1), field(two, "target").size(1));
  for (const char* name : {"src_tokens", "prev_output_tokens", "target"}) {
    const int64_t cols = std::string(name) == "src_tokens" ? s : t;
    merged.fields.set(name, torch::cat({pad_to(field(one, name), cols), pad_to(field(two, name), cols)}));
  }
  merged.fields.set("src_lengths", torch::cat({field(one, "src_lengths"), field(two, "src_lengths")}));
  merged.ntokens = one.ntokens + two.ntokens;
  merged.nsentences = 4;
  b.train_step({merged});
  for (size_t i = 0; i < a.params().size(); ++i)
    EXPECT_TRUE(torch::allclose(a.params()[i], b.params()[i], 1e-5, 1e-7)) << "parameter " << i;
}

TEST(Trainer, NonFiniteLossSkipsTheUpdate) {
  auto trainer = make_seeded_trainer(2, 0.0);
  trainer.train_step({make_batch(0)});
  auto before = snapshot_params(trainer);
  auto& model = static_cast<testing::ToyModel&>(trainer.model());
  {
    torch::NoGradGuard no_grad;
    model.scale_.fill_(std::numeric_limits<float>::quiet_NaN());
  }
  auto r = trainer.train_step({make_batch(1)});
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(trainer.num_updates(), 1);
  {
    torch::NoGradGuard no_grad;
    model.scale_.fill_(1.0);
  }
  auto after = snapshot_params(trainer);
  after.back().fill_(std::numeric_limits<float>::quiet_NaN());  // we changed `scale` ourselves
  before.back().fill_(std::numeric_limits<float>::quiet_NaN());
  for (size_t i = 0; i + 1 < before.size(); ++i) EXPECT_TRUE(torch::equal(before[i], after[i]));
}

TEST(Trainer, ResumeFromCheckpointIsBitIdentical) {
  // Dropout makes the RNG state part of what must be restored; Adam's moments and step
  // counts and the LR schedule position too.
  auto full = make_seeded_trainer(7, 0.3);
  for (int k = 0; k < 8; ++k) full.train_step({make_batch(k), make_batch(k + 10)});

  auto first = make_seeded_trainer(7, 0.3);
  for (int k = 0; k < 3; ++k) first.train_step({make_batch(k), make_batch(k + 10)});
  const auto path = temp_path("resume.pt");
  save(first, path);
  torch::manual_seed(999);  // disturb the global generator: the checkpoint must restore it
  torch::rand({100});

  auto resumed = make_seeded_trainer(123, 0.3);  // different initial weights, all overwritten
  CheckpointReader reader(path);
  resumed.load_state(reader);
  EXPECT_EQ(resumed.num_updates(), 3);
  for (int k = 3; k < 8; ++k) resumed.train_step({make_batch(k), make_batch(k + 10)});
  EXPECT_TRUE(bit_identical(snapshot_params(full), snapshot_params(resumed)));

  // Without restoring the RNG, dropout masks differ and so do the weights: the test can fail.
  auto no_rng = make_seeded_trainer(123, 0.3);
  CheckpointReader again(path);
  no_rng.load_state(again);
  torch::manual_seed(999);
  for (int k = 3; k < 8; ++k) no_rng.train_step({make_batch(k), make_batch(k + 10)});
  EXPECT_FALSE(bit_identical(snapshot_params(full), snapshot_params(no_rng)));
}

// fairseq's EMA: a copy of the weights until ema_start_update, then
// ema = decay * ema + (1 - decay) * weights after each update, in fp32; saved beside the
// weights, a resumed run continues it exactly.
TEST(Trainer, EmaFollowsTheFormulaAndResumesExactly) {
  const EmaOptions options{true, 0.75, /*start_update=*/3, /*update_freq=*/1, false, /*seed_model=*/""};
  auto full = make_seeded_trainer(7, 0.3);
  full.enable_ema(options);
  std::vector<torch::Tensor> expected = snapshot_params(full);  // the EMA starts as the weights
  for (int k = 0; k < 6; ++k) {
    full.train_step({make_batch(k)});
    const auto weights = snapshot_params(full);
    for (size_t i = 0; i < expected.size(); ++i) {
      if (full.num_updates() < 3)
        expected[i] = weights[i].clone();
      else
        expected[i].mul_(0.75).add_(weights[i], 0.25);
    }
    ASSERT_TRUE(bit_identical(full.ema()->averages(), expected)) << "after update " << full.num_updates();
    // A copy before ema_start_update, an average from then on.
    EXPECT_EQ(bit_identical(full.ema()->averages(), weights), full.num_updates() < 3) << full.num_updates();
  }

  auto first = make_seeded_trainer(7, 0.3);
  first.enable_ema(options);
  for (int k = 0; k < 4; ++k) first.train_step({make_batch(k)});
  const auto path = temp_path("ema.pt");
  save(first, path);
  auto resumed = make_seeded_trainer(123, 0.3);
  resumed.enable_ema(options);
  CheckpointReader reader(path);
  ASSERT_TRUE(reader.has_section("ema"));
  resumed.load_state(reader);
  for (int k = 4; k < 6; ++k) resumed.train_step({make_batch(k)});
  EXPECT_TRUE(bit_identical(snapshot_params(full), snapshot_params(resumed)));
  EXPECT_TRUE(bit_identical(full.ema()->averages(), resumed.ema()->averages()));

  // A checkpoint without EMA seeds it with its weights (fairseq's restore from the model).
  auto plain = make_seeded_trainer(7, 0.3);
  plain.train_step({make_batch(0)});
  const auto plain_path = temp_path("no-ema.pt");
  save(plain, plain_path);
  auto seeded = make_seeded_trainer(9, 0.3);
  seeded.enable_ema(options);
  CheckpointReader plain_reader(plain_path);
  seeded.load_state(plain_reader);
  EXPECT_TRUE(bit_identical(seeded.ema()->averages(), snapshot_params(plain)));
}

// ema.ema_seed_model (fairseq's --ema-seed-model): an EMA that does not come from the
// checkpoint resumed starts as another checkpoint's EMA, then averages this run's weights.
TEST(Trainer, EmaSeedModelStartsTheEmaAsAnotherCheckpointsEma) {
  EmaOptions options{true, 0.75, /*start_update=*/0, /*update_freq=*/1, false, /*seed_model=*/""};
  auto donor = make_seeded_trainer(7, 0.0);
  donor.enable_ema(options);
  for (int k = 0; k < 3; ++k) donor.train_step({make_batch(k)});
  const auto donor_path = temp_path("ema-donor.pt");
  save(donor, donor_path);

  options.seed_model = donor_path;
  auto seeded = make_seeded_trainer(9, 0.0);
  const auto own = snapshot_params(seeded);
  seeded.enable_ema(options);
  EXPECT_TRUE(bit_identical(seeded.ema()->averages(), donor.ema()->averages()));
  EXPECT_FALSE(bit_identical(donor.ema()->averages(), own));
  EXPECT_TRUE(bit_identical(snapshot_params(seeded), own)) << "only the EMA is seeded";
  seeded.train_step({make_batch(5)});
  std::vector<torch::Tensor> expected;
  const auto weights = snapshot_params(seeded);
  for (size_t i = 0; i < weights.size(); ++i)
    expected.push_back(donor.ema()->averages()[i].clone().mul_(0.75).add_(weights[i], 0.25));
  EXPECT_TRUE(bit_identical(seeded.ema()->averages(), expected));
  // A start from a checkpoint without EMA (here: fine-tuning) seeds it again.
  const auto plain_path = temp_path("ema-plain.pt");
  auto plain_trainer = make_seeded_trainer(3, 0.0);
  save(plain_trainer, plain_path);
  CheckpointReader plain(plain_path);
  seeded.load_state(plain, plain.progress(), {/*optimizer=*/false, /*ema=*/false, /*rng=*/false});
  EXPECT_TRUE(bit_identical(seeded.ema()->averages(), donor.ema()->averages()));
  // A seed without EMA: one line naming it.
  options.seed_model = plain_path;
  try {
    make_seeded_trainer(9, 0.0).enable_ema(options);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), plain_path +
                                         ": has no EMA weights to seed the EMA from (ema.ema_seed_model; "
                                         "train it with --store-ema)");
  }
}

TEST(Trainer, EmaUpdateFreqAveragesEveryNthUpdateOnly) {
  auto trainer = make_seeded_trainer(7, 0.0);
  trainer.enable_ema({true, 0.5, 0, /*update_freq=*/2, false, /*seed_model=*/""});
  auto before = snapshot_params(trainer);
  trainer.train_step({make_batch(0)});
  EXPECT_TRUE(bit_identical(trainer.ema()->averages(), before));  // update 1: no EMA step
  trainer.train_step({make_batch(1)});
  const auto weights = snapshot_params(trainer);
  for (size_t i = 0; i < before.size(); ++i) before[i].mul_(0.5).add_(weights[i], 0.5);
  EXPECT_TRUE(bit_identical(trainer.ema()->averages(), before));
}

// What each checkpoint.reset_* resets, and what it keeps.
TEST(Trainer, ResetOptimizerAndLrSchedulerRestartOnlyTheirPart) {
  auto first = make_seeded_trainer(7, 0.0);
  for (int k = 0; k < 5; ++k) first.train_step({make_batch(k)});
  TrainingProgress saved;
  saved.epoch = 2;
  saved.next_batch = 3;
  saved.has_best = true;
  saved.best_metric = 1.5;
  saved.bad_validations = 1;
  const auto path = temp_path("restart.pt");
  save(first, path, saved);
  auto adam_step = [](const std::string& checkpoint) {
    const safetensors::Reader reader(checkpoint);
    const auto& step = reader.tensor("optimizer.hidden.weight.step");
    int64_t value = 0;
    std::memcpy(&value, step.data, sizeof value);
    return value;
  };
  ASSERT_EQ(adam_step(path), 5);

  auto restart = [&](const RestartOptions& options, bool optimizer) {
    auto trainer = make_seeded_trainer(11, 0.0);
    CheckpointReader reader(path);
    trainer.load_state(reader, restart_progress(reader.progress(), options), {optimizer, true, true});
    return trainer;
  };
  // --reset-optimizer: Adam's moments and step counts start afresh; the update count and
  // the schedule's position stay.
  RestartOptions reset_optimizer;
  reset_optimizer.reset_optimizer = true;
  auto fresh_adam = restart(reset_optimizer, false);
  EXPECT_EQ(fresh_adam.num_updates(), 5);
  EXPECT_EQ(fresh_adam.current_lr(), first.current_lr());
  fresh_adam.train_step({make_batch(5)});
  const auto fresh_path = temp_path("restart-fresh.pt");
  save(fresh_adam, fresh_path);
  EXPECT_EQ(adam_step(fresh_path), 1);
  auto kept_adam = restart({}, true);
  kept_adam.train_step({make_batch(5)});
  save(kept_adam, fresh_path);
  EXPECT_EQ(adam_step(fresh_path), 6);

  // --reset-lr-scheduler: the warm-up starts again at the kept update count, and a resume
  // of that run continues the restarted schedule.
  RestartOptions reset_schedule;
  reset_schedule.reset_lr_scheduler = true;
  auto restarted = restart(reset_schedule, true);
  EXPECT_EQ(restarted.num_updates(), 5);
  EXPECT_EQ(restarted.current_lr(), make_seeded_trainer(1, 0.0).current_lr());
  EXPECT_NE(restarted.current_lr(), first.current_lr());
  const TrainingProgress p = restart_progress(CheckpointReader(path).progress(), reset_schedule);
  EXPECT_EQ(p.lr_schedule_start, 5);
  restarted.train_step({make_batch(5)});
  const double second_lr = restarted.current_lr();
  save(restarted, fresh_path, p);
  auto resumed = make_seeded_trainer(12, 0.0);
  CheckpointReader again(fresh_path);
  resumed.load_state(again);
  EXPECT_EQ(resumed.current_lr(), second_lr);
  auto reference = make_seeded_trainer(1, 0.0);
  reference.train_step({make_batch(0)});
  EXPECT_EQ(second_lr, reference.current_lr());
}

TEST(Trainer, RestartProgressResetsTheDataPositionAndMetersOnRequest) {
  TrainingProgress saved;
  saved.epoch = 3;
  saved.next_batch = 7;
  saved.num_updates = 40;
  saved.best_metric = 2.25;
  saved.has_best = true;
  saved.bad_validations = 2;
  saved.nan_streak = 1;
  saved.lr_schedule_start = 10;
  auto same = [](const TrainingProgress& a, const TrainingProgress& b) {
    return a.epoch == b.epoch && a.next_batch == b.next_batch && a.num_updates == b.num_updates &&
           a.best_metric == b.best_metric && a.has_best == b.has_best && a.bad_validations == b.bad_validations &&
           a.nan_streak == b.nan_streak && a.lr_schedule_start == b.lr_schedule_start;
  };
  EXPECT_TRUE(same(restart_progress(saved, {}), saved));
  RestartOptions o;
  o.reset_dataloader = true;
  TrainingProgress expected = saved;
  expected.epoch = 1;
  expected.next_batch = 0;
  EXPECT_TRUE(same(restart_progress(saved, o), expected));
  o = {};
  o.reset_meters = true;
  expected = saved;
  expected.best_metric = 0;
  expected.has_best = false;
  expected.bad_validations = 0;
  expected.nan_streak = 0;
  EXPECT_TRUE(same(restart_progress(saved, o), expected));
  o = {};
  o.reset_optimizer = true;  // the optimizer's state is the trainer's, not the progress's
  EXPECT_TRUE(same(restart_progress(saved, o), saved));
  o = {};
  o.finetune_from_model = "x.pt";  // everything from the start
  EXPECT_TRUE(same(restart_progress(saved, o), TrainingProgress{}));
}

// The options of fine-tuning, restarts and EMA: a bad value or combination is one line
// naming the key.
TEST(Trainer, RestartAndEmaOptionsRefuseBadValues) {
  const std::string recipe = std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml";
  auto error_of = [&](std::vector<std::pair<std::string, core::Value>> settings) {
    settings.emplace_back("task.data", std::string("data"));
    try {
      const auto cfg = tasks::training_recipe(recipe, {}, settings);
      restart_options(cfg);
      ema_options(cfg);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using V = core::Value;
  const std::string ft = "checkpoint.finetune_from_model";
  EXPECT_EQ(error_of({{ft, V(std::string("a.pt"))}}), "no error");
  EXPECT_NE(
      error_of({{ft, V(std::string("a.pt"))}, {"checkpoint.restore_file", V(std::string("b.pt"))}})
          .find("key 'checkpoint.finetune_from_model': 'a.pt' and checkpoint.restore_file 'b.pt' exclude each other"),
      std::string::npos);
  for (const char* reset : {"checkpoint.reset_optimizer", "checkpoint.reset_lr_scheduler",
                            "checkpoint.reset_dataloader", "checkpoint.reset_meters"})
    EXPECT_NE(error_of({{ft, V(std::string("a.pt"))}, {reset, V(true)}})
                  .find(std::string("'a.pt' and ") + reset + " exclude each other"),
              std::string::npos)
        << reset;
  EXPECT_NE(error_of({{"ema.ema_decay", V(0.0)}}).find("ema.ema_decay"), std::string::npos);
  EXPECT_NE(error_of({{"ema.ema_decay", V(1.5)}}).find("ema.ema_decay"), std::string::npos);
  EXPECT_NE(error_of({{"ema.ema_decay", V(-0.5)}}).find("ema.ema_decay"), std::string::npos);
  EXPECT_EQ(error_of({{"ema.ema_decay", V(1.0)}}), "no error");
  EXPECT_NE(error_of({{"ema.ema_start_update", V(int64_t{-1})}}).find("ema.ema_start_update"), std::string::npos);
  EXPECT_NE(error_of({{"ema.ema_update_freq", V(int64_t{0})}}).find("ema.ema_update_freq"), std::string::npos);
  EXPECT_NE(error_of({{"ema.validate_with_ema", V(true)}}).find("key 'ema.validate_with_ema': needs ema.store_ema"),
            std::string::npos);
  const V seed(std::string("/nonexistent/seed.pt"));
  EXPECT_NE(error_of({{"ema.ema_seed_model", seed}}).find("key 'ema.ema_seed_model': needs ema.store_ema"),
            std::string::npos);
  EXPECT_NE(error_of({{"ema.ema_seed_model", seed}, {"ema.store_ema", V(true)}})
                .find("key 'ema.ema_seed_model': /nonexistent/seed.pt: no such checkpoint"),
            std::string::npos);
  for (const auto& message : {error_of({{"ema.ema_decay", V(0.0)}}),
                              error_of({{ft, V(std::string("a.pt"))}, {"checkpoint.reset_meters", V(true)}})})
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(Checkpoint, MetaAndProgressRoundTrip) {
  auto trainer = make_seeded_trainer(3, 0.0);
  trainer.train_step({make_batch(0)});
  const auto path = temp_path("meta.pt");
  TrainingProgress progress;
  progress.epoch = 4;
  progress.next_batch = 17;
  progress.best_metric = 0.1 + 0.2;  // a double whose shortest decimal form is long
  progress.has_best = true;
  progress.bad_validations = 2;
  progress.nan_streak = 1;
  progress.lr_schedule_start = 5;
  save(trainer, path, progress);
  CheckpointReader reader(path);
  const auto expected = sample_meta();
  EXPECT_EQ(reader.format_version(), 3);
  EXPECT_EQ(reader.meta().task, "toy-task");
  EXPECT_EQ(reader.meta().recipe_yaml, expected.recipe_yaml);
  EXPECT_EQ(reader.meta().data, expected.data);  // binary bytes included
  EXPECT_EQ(reader.meta().get("src_lang"), "de");
  EXPECT_EQ(reader.meta().get("no such data"), "");
  EXPECT_EQ(reader.progress().epoch, 4);
  EXPECT_EQ(reader.progress().next_batch, 17);
  EXPECT_EQ(reader.progress().num_updates, 1);
  EXPECT_EQ(reader.progress().best_metric, 0.1 + 0.2);  // exactly
  EXPECT_TRUE(reader.progress().has_best);
  EXPECT_EQ(reader.progress().bad_validations, 2);
  EXPECT_EQ(reader.progress().nan_streak, 1);
  EXPECT_EQ(reader.progress().lr_schedule_start, 5);
  // The weights load into a fresh model.
  auto other = make_seeded_trainer(50, 0.0);
  reader.load_model(other.model());
  EXPECT_TRUE(bit_identical(snapshot_params(trainer), snapshot_params(other)));
}

// Runs in fp16/bf16 store their model in that dtype; generation builds an fp32 model
// and must still load them (converted), while a model of another shape must not.
TEST(Checkpoint, LowPrecisionWeightsLoadIntoAnFp32ModelOfTheSameShapeOnly) {
  torch::manual_seed(7);
  testing::ToyModel low(kVocab, 8, 0.0);
  low.to(torch::kBFloat16);
  const auto path = temp_path("bf16-weights.pt");
  CheckpointWriter writer;
  writer.set_meta(sample_meta());
  writer.set_progress({});
  writer.set_model(low);
  writer.write(path);

  CheckpointReader reader(path);
  testing::ToyModel fp32(kVocab, 8, 0.0);
  reader.load_model(fp32);
  const auto stored = low.parameters(), loaded = fp32.parameters();
  ASSERT_EQ(stored.size(), loaded.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(loaded[i].scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::equal(loaded[i], stored[i].to(torch::kFloat32)));
  }

  testing::ToyModel wider(kVocab + 3, 8, 0.0);
  CheckpointReader again(path);
  try {
    again.load_model(wider);
    ADD_FAILURE() << "a model of another vocabulary loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("do not fit"), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, TruncatedOrCorruptFilesGiveAClearError) {
  auto trainer = make_seeded_trainer(3, 0.0);
  const auto path = temp_path("good.pt");
  save(trainer, path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto write = [](const std::string& p, const std::string& b) {
    std::ofstream(p, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
  };

  const auto truncated = temp_path("truncated.pt");
  write(truncated, bytes.substr(0, bytes.size() / 2));
  auto message = message_of([&] { CheckpointReader r(truncated); });
  EXPECT_NE(message.find(truncated), std::string::npos) << message;
  EXPECT_NE(message.find("corrupt"), std::string::npos) << message;

  const auto garbage = temp_path("garbage.pt");
  write(garbage, "this is not a checkpoint");
  EXPECT_NE(message_of([&] { CheckpointReader r(garbage); }).find(garbage), std::string::npos);

  // Flipped bytes inside the file are caught by the checksum.
  const auto flipped = temp_path("flipped.pt");
  std::string damaged = bytes;
  for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) damaged[i] ^= 0x5a;
  write(flipped, damaged);
  message = message_of([&] {
    CheckpointReader r(flipped);
    auto other = make_seeded_trainer(4, 0.0);
    other.load_state(r);
  });
  EXPECT_NE(message.find(flipped), std::string::npos) << message;
  EXPECT_NE(message.find("checksum"), std::string::npos) << message;

  EXPECT_NE(message_of([&] { CheckpointReader r(temp_path("missing.pt")); }).find("no such checkpoint"),
            std::string::npos);
}

// A checkpoint larger than the reader's 16 MiB hashing chunks: its checksum holds, a
// byte flipped past the first chunk is caught; inference loading (adopt) takes the fp32
// weights over, and releasing the archive keeps meta and progress but refuses sections.
TEST(Checkpoint, LargeFilesVerifyAcrossHashChunksAndAdoptedWeightsOutliveTheReleasedArchive) {
  torch::manual_seed(11);
  testing::ToyModel big(kVocab, 1500, 0.0);  // hidden: 2 x 1500 x 1500 floats, 18 MB
  const auto path = temp_path("big.pt");
  CheckpointWriter writer;
  writer.set_meta(sample_meta());
  TrainingProgress progress;
  progress.epoch = 3;
  writer.set_progress(progress);
  writer.set_model(big);
  writer.write(path);
  ASSERT_GT(std::filesystem::file_size(path), size_t{17} << 20);

  CheckpointReader reader(path);
  testing::ToyModel loaded(kVocab, 1500, 0.0);
  reader.load_model(loaded, /*adopt=*/true);
  reader.release_tensors();
  const auto stored = big.parameters(), adopted = loaded.parameters();
  ASSERT_EQ(stored.size(), adopted.size());
  for (size_t i = 0; i < stored.size(); ++i) EXPECT_TRUE(torch::equal(adopted[i], stored[i])) << i;
  EXPECT_EQ(reader.meta().get("src_lang"), "de");
  EXPECT_EQ(reader.progress().epoch, 3);
  const auto refused = message_of([&] { reader.section("model"); });
  EXPECT_NE(refused.find("released"), std::string::npos) << refused;

  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[(size_t{16} << 20) + 12345] ^= 0x01;
  const auto flipped = temp_path("big-flipped.pt");
  std::ofstream(flipped, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const auto message = message_of([&] { CheckpointReader r(flipped); });
  EXPECT_EQ(message.rfind(flipped + ": checksum mismatch (stored crc32c ", 0), 0u) << message;
  EXPECT_NE(message.find("the file is corrupt"), std::string::npos) << message;
}

// The address ranges /proc/self/maps shows mapped from `path`.
std::vector<std::pair<uintptr_t, uintptr_t>> mapped_ranges(const std::string& path) {
  const std::string target = std::filesystem::canonical(path).string();
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < target.size() || line.compare(line.size() - target.size(), target.size(), target) != 0) continue;
    const size_t dash = line.find('-'), space = line.find(' ');
    ranges.emplace_back(std::stoull(line.substr(0, dash), nullptr, 16),
                        std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16));
  }
  return ranges;
}

bool inside(const std::vector<std::pair<uintptr_t, uintptr_t>>& ranges, const torch::Tensor& t) {
  const auto begin = reinterpret_cast<uintptr_t>(t.data_ptr());
  for (const auto& [from, to] : ranges)
    if (begin >= from && begin + t.nbytes() <= to) return true;
  return false;
}

// Weights of the three types inference adopts, plus an int64 buffer it copies.
struct InPlaceWeights : torch::nn::Module {
  explicit InPlaceWeights(int64_t seed) {
    torch::manual_seed(seed);
    f32 = register_parameter("f32", torch::randn({64, 48}));
    bf16 = register_parameter("bf16", torch::randn({32, 40}).to(torch::kBFloat16));
    i8 = register_buffer("i8", torch::randint(-127, 128, {16, 24}).to(torch::kChar));
    counts = register_buffer("counts", torch::arange(5));
  }
  torch::Tensor f32, bf16, i8, counts;
};

// A format 3 file loaded for inference (adopt) lends its fp32, bf16 and int8 tensors
// where they lie in the reader's mapping, which outlives the reader; loaded for training
// they are copied (the mapping is read-only).
TEST(Checkpoint, Format3InferenceWeightsShareTheFileMappingAndTrainingCopies) {
  const auto path = temp_path("in-place.pt");
  InPlaceWeights saved(1);
  CheckpointWriter writer;
  writer.set_meta(sample_meta());
  writer.set_progress({});
  writer.set_model(saved);
  writer.write(path);

  InPlaceWeights inference(2), training(3);
  {
    CheckpointReader reader(path);
    reader.load_model(inference, /*adopt=*/true);
    reader.release_tensors();
  }
  CheckpointReader(path).load_model(training, /*adopt=*/false);
  const auto ranges = mapped_ranges(path);
  ASSERT_FALSE(ranges.empty()) << "the adopted weights keep the mapping after the reader is gone";
  const auto expected = saved.named_parameters(), adopted = inference.named_parameters(),
             copied = training.named_parameters();
  for (const auto& p : expected) {
    EXPECT_TRUE(inside(ranges, adopted[p.key()])) << p.key();
    EXPECT_FALSE(inside(ranges, copied[p.key()])) << p.key();
    EXPECT_TRUE(torch::equal(adopted[p.key()], p.value())) << p.key();
    EXPECT_TRUE(torch::equal(copied[p.key()], p.value())) << p.key();
  }
  EXPECT_TRUE(inside(ranges, inference.i8));
  EXPECT_FALSE(inside(ranges, training.i8));
  EXPECT_TRUE(torch::equal(inference.i8, saved.i8));
  EXPECT_FALSE(inside(ranges, inference.counts)) << "int64 buffers are copied";
  EXPECT_TRUE(torch::equal(inference.counts, saved.counts));
  EXPECT_TRUE(torch::equal(training.i8, saved.i8));
}

// The archive streams into the temporary file: a write that fails part way (here the
// file-size limit, as a full disk would) is a one-line error naming the checkpoint, and the
// checkpoint already there stays whole, with no temporary file left beside it.
TEST(Checkpoint, AWriteThatFailsPartWayKeepsThePreviousCheckpoint) {
  const auto path = temp_path("limited.pt");
  CheckpointWriter small;
  small.set_meta(sample_meta());
  small.set_progress(TrainingProgress{});
  testing::ToyModel tiny(kVocab, 8, 0.0);
  small.set_model(tiny);
  small.write(path);
  const auto before = std::filesystem::file_size(path);

  torch::manual_seed(5);
  testing::ToyModel big(kVocab, 600, 0.0);  // about 3 MB of weights
  CheckpointWriter writer;
  writer.set_meta(sample_meta());
  writer.set_progress(TrainingProgress{});
  writer.set_model(big);
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  rlimit limit = old_limit;
  limit.rlim_cur = 1 << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const auto message = message_of([&] { writer.write(path); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(message, path + ": write failed: File too large");
  EXPECT_EQ(std::filesystem::file_size(path), before);
  CheckpointReader reader(path);  // still whole
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find("limited.pt.tmp"), std::string::npos) << entry.path();
  CheckpointWriter again;  // without the limit the same checkpoint is written
  again.set_meta(sample_meta());
  again.set_progress(TrainingProgress{});
  again.set_model(big);
  again.write(path);
  EXPECT_GT(std::filesystem::file_size(path), size_t{1} << 20);
}

// A crafted file behind a valid checksum: a string in the archive's pickle claims 3 GB.
// LibTorch would allocate and clear that much before finding the file short; the reader
// refuses it first, naming the record.
TEST(Checkpoint, CraftedLengthInsideTheArchiveIsRefusedBeforeLibTorchReadsIt) {
  const std::string path = kFormat2Checkpoint;
  std::string archive;
  {
    std::ifstream in(path, std::ios::binary);
    archive.assign(std::istreambuf_iterator<char>(in), {});
  }
  archive.resize(archive.size() - 24);  // the trailer
  // The first BINUNICODE ('X', 4-byte length) of data.pkl, found after its local header.
  const size_t record = archive.find("data.pkl");
  ASSERT_NE(record, std::string::npos);
  const size_t opcode = archive.find('X', record);
  ASSERT_NE(opcode, std::string::npos);
  const uint32_t huge = 3'000'000'000u;
  std::memcpy(&archive[opcode + 1], &huge, 4);
  append_trailer(archive);
  const auto crafted = temp_path("crafted.pt");
  std::ofstream(crafted, std::ios::binary).write(archive.data(), static_cast<std::streamsize>(archive.size()));
  const std::string message = message_of([&] { CheckpointReader r(crafted); });
  EXPECT_NE(message.find(crafted + ": corrupt ("), std::string::npos) << message;
  EXPECT_NE(message.find("data.pkl: a pickle asks for 3000000000 bytes"), std::string::npos) << message;
}

// The archive of `path` (a checkpoint) rewritten record by record through LibTorch's own
// zip reader and writer, with the class code of the top module replaced by `edit(code)`,
// then resealed with a valid checksum: a file crafted rather than damaged.
std::string rewrite_top_module_code(const std::string& path, const std::string& out,
                                    const std::function<std::string(std::string)>& edit) {
  std::string file;
  {
    std::ifstream in(path, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  file.resize(file.size() - 24);  // the trailer
  caffe2::serialize::PyTorchStreamReader reader(
      std::make_shared<caffe2::serialize::MemoryReadAdapter>(file.data(), static_cast<off_t>(file.size())));
  std::string archive;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) -> size_t {
    archive.append(static_cast<const char*>(data), size);
    return size;
  });
  writer.setMinVersion(reader.version());
  for (const auto& name : reader.getAllRecords()) {
    // Records the writer adds itself (LibTorch 2.x also writes a serialization id).
    if (name == "version" || name == ".data/version" || name == ".data/serialization_id") continue;
    const auto [bytes, length] = reader.getRecord(name);
    std::string record(static_cast<const char*>(bytes.get()), length);
    const bool code = name == "code/__torch__.py";
    if (code) record = edit(record);
    writer.writeRecord(name, record.data(), record.size(), /*compress=*/code);
  }
  writer.writeEndOfFile();
  append_trailer(archive);
  std::ofstream(out, std::ios::binary).write(archive.data(), static_cast<std::streamsize>(archive.size()));
  return out;
}

// LibTorch compiles an archive's code/*.py records (each archived module's TorchScript
// class) before csan reads anything, and its script parser crashes on some class bodies:
// a class constant without a type crashed it in the fuzz target. The reader refuses any
// line csan's writer does not emit, naming the record and line, and deflated records (as
// LibTorch writes code) are inflated for the check.
TEST(Checkpoint, CraftedModuleCodeIsRefusedBeforeLibTorchCompilesIt) {
  const std::string path = kFormat2Checkpoint;
  // The rewrite itself keeps a loadable checkpoint: only the edit is refused below.
  const auto same = rewrite_top_module_code(path, temp_path("code-same.pt"), [](std::string code) { return code; });
  EXPECT_EQ(CheckpointReader(same).progress().num_updates, 3);

  std::string edited_line;
  const auto crafted = rewrite_top_module_code(path, temp_path("code-crafted.pt"), [&](std::string code) {
    const std::string attribute = "  csan_checkpoint_version : int\n";
    const size_t at = code.find(attribute);
    EXPECT_NE(at, std::string::npos) << code;
    if (at != std::string::npos) code.replace(at, attribute.size(), "  csan_checkpoint_version = 2\n");
    edited_line = std::to_string(std::count(code.begin(), code.begin() + static_cast<long>(at), '\n') + 1);
    return code;
  });
  const std::string message = message_of([&] { CheckpointReader r(crafted); });
  EXPECT_NE(message.find(crafted + ": corrupt (archive/code/__torch__.py: line " + edited_line +
                         " is not a module declaration csan writes)"),
            std::string::npos)
      << message;
  // Other shapes LibTorch would compile and csan never writes.
  for (const char* line : {"  def forward(self):\n", "  x : Final[int] = 3\n", "  __constants__ = [\"x\"]\n",
                           "  __annotations__[\"a\\\"b\"] = Tensor\n", "  y : Tensor[\n", "import os\n"}) {
    const auto file =
        rewrite_top_module_code(path, temp_path("code-line.pt"), [&](std::string code) { return code + line; });
    EXPECT_NE(message_of([&] { CheckpointReader r(file); }).find("is not a module declaration csan writes"),
              std::string::npos)
        << line;
  }
}

// A memo index out of sequence: LibTorch's unpickler grows its memo table to the index a
// BINPUT names (a crafted one asked for 30 GB in the fuzz target; input stored as
// tests/fuzz/corpus/checkpoint/crash-memo-index-30GB). The reader refuses it first.
TEST(Checkpoint, MemoIndexOutOfSequenceIsRefusedBeforeLibTorchReadsIt) {
  const std::string path = kFormat2Checkpoint;
  std::string archive;
  {
    std::ifstream in(path, std::ios::binary);
    archive.assign(std::istreambuf_iterator<char>(in), {});
  }
  archive.resize(archive.size() - 24);  // the trailer
  // data.pkl opens with the module's class (GLOBAL), memoized into slot 0: BINPUT 0.
  const size_t record = archive.find("data.pkl");
  ASSERT_NE(record, std::string::npos);
  const size_t put = archive.find(std::string("\nq\x00", 3), record);
  ASSERT_NE(put, std::string::npos);
  archive[put + 2] = static_cast<char>(200);
  append_trailer(archive);
  const auto crafted = temp_path("memo.pt");
  std::ofstream(crafted, std::ios::binary).write(archive.data(), static_cast<std::streamsize>(archive.size()));
  const std::string message = message_of([&] { CheckpointReader r(crafted); });
  EXPECT_NE(message.find("data.pkl: a pickle stores to memo slot 200 of 0"), std::string::npos) << message;
}

// The pickle walk follows the unpickler's stack: LibTorch pops without checking, and an
// opcode on a too-short stack read before it (a SEGV found by the fuzz target, input
// tests/fuzz/corpus/checkpoint/crash-unpickler-empty-stack).
TEST(Checkpoint, PickleOpcodesOnATooShortStackAreRefused) {
  using namespace std::string_literals;  // the pickles hold NUL bytes
  auto pickle = [](const std::string& body) { return "\x80\x02"s + body + "."; };
  EXPECT_EQ(pickle_problem(pickle("K\x01\x85"s)), "");                   // (1,)
  EXPECT_EQ(pickle_problem(pickle("(K\x01K\x02tq\x00h\x00\x86"s)), "");  // ((1, 2), (1, 2))
  EXPECT_EQ(pickle_problem(pickle("}(X\x01\x00\x00\x00"
                                  "aK\x01u"s)),
            "");  // {'a': 1}
  EXPECT_EQ(pickle_problem(pickle("\x86"s)), "a pickle takes more values than it made");
  EXPECT_EQ(pickle_problem(pickle("K\x01(K\x02\x86"s)), "a pickle takes more values than it made");  // across a mark
  EXPECT_EQ(pickle_problem(pickle("K\x01t"s)), "a pickle closes a mark it never set");
  EXPECT_EQ(pickle_problem(pickle("(K\x01K\x02u"s)), "a pickle fills an object it never made");
  EXPECT_EQ(pickle_problem("\x80\x02."s), "a pickle takes more values than it made");
  EXPECT_EQ(pickle_problem(pickle("K\x01h\x00"s)), "a pickle reads memo slot 0 of 0");
}

// LibTorch's unpickler gives a loaded tensor the sizes, strides and offset the file says,
// whatever its storage holds: one flipped size byte (found by the checkpoint fuzz target,
// tests/fuzz/corpus/checkpoint/crash-storage-bounds) let a read run past the storage. The
// reader checks every tensor of the archive first; this is the check.
TEST(Checkpoint, ATensorLargerThanItsStorageIsCaught) {
  EXPECT_TRUE(tensor_within_storage(torch::Tensor()));
  EXPECT_TRUE(tensor_within_storage(torch::zeros({3, 4})));
  EXPECT_TRUE(tensor_within_storage(torch::zeros({3, 4}).t()));
  EXPECT_TRUE(tensor_within_storage(torch::zeros({8}).narrow(0, 6, 2)));
  EXPECT_TRUE(tensor_within_storage(torch::zeros({0, 5})));
  auto grown = torch::zeros({4}, torch::kUInt8);
  grown.unsafeGetTensorImpl()->set_sizes_contiguous({16});  // as the unpickler would set it
  EXPECT_FALSE(tensor_within_storage(grown));
  auto shifted = torch::zeros({4});
  shifted.unsafeGetTensorImpl()->set_storage_offset(2);  // 2 + 4 elements over a storage of 4
  EXPECT_FALSE(tensor_within_storage(shifted));
  auto huge_stride = torch::zeros({2, 2});
  const std::vector<int64_t> sizes{2, 2}, strides{int64_t{1} << 62, 1};
  huge_stride.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes), c10::IntArrayRef(strides));
  EXPECT_FALSE(tensor_within_storage(huge_stride));
}

}  // namespace
}  // namespace csan::training
