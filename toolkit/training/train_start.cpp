#include "toolkit/training/train_start.h"

#include <filesystem>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/error.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/training/checkpoint_manager.h"
#include "toolkit/training/distributed_setup.h"
#include "toolkit/training/precision.h"
#include "toolkit/training/recipe_compat.h"
#include "toolkit/training/trainer_parts.h"
#include "toolkit/training/validation_run.h"
#include "toolkit/training/weights_ema.h"

namespace fs = std::filesystem;

namespace csan::training {

std::optional<std::string> restore_path(const core::Config& cfg, const std::string& save_dir) {
  const std::string restore = cfg.get<std::string>("checkpoint.restore_file");
  if (fs::exists(restore)) return restore;
  const std::string in_save_dir = (fs::path(save_dir) / restore).string();
  if (fs::path(restore).is_relative() && fs::exists(in_save_dir)) return in_save_dir;
  if (!cfg.is_set("checkpoint.restore_file")) return std::nullopt;
  throw Error::for_key("checkpoint.restore_file",
                       restore + ": no such checkpoint" +
                           (fs::path(restore).is_relative() ? " (nor " + in_save_dir + ")" : std::string()));
}

namespace {

// A save dir that already holds a checkpoint continues only the fine-tuning run that wrote
// it (the same command, rerun after an interruption, resumes); any other checkpoint there
// (trained from scratch, or fine-tuned from another model) is refused rather than resumed
// in place of the fine-tuning asked for. fairseq resumes whatever checkpoint_last it finds.
void check_same_finetuning(const core::Config& cfg, const checkpoint::CheckpointMeta& saved, const std::string& path,
                           const std::string& finetune) {
  const core::Config saved_recipe =
      core::Config::from_yaml_string(saved.recipe_yaml, cfg.schema(), path + " (embedded recipe)");
  const std::string started_from = saved_recipe.get<std::string>("checkpoint.finetune_from_model");
  auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code error;
    return a == b || (!a.empty() && !b.empty() && fs::exists(a) && fs::exists(b) && fs::equivalent(a, b, error));
  };
  if (same_file(started_from, finetune)) return;
  throw Error::for_key("checkpoint.finetune_from_model",
                       path + " already exists and is " +
                           (started_from.empty() ? std::string("not a fine-tuning run")
                                                 : "a fine-tuning run from " + started_from) +
                           ": fine-tune into another --save-dir, or resume it without --finetune-from-model");
}

}  // namespace

ResumePoint open_resume_point(const core::Config& cfg, const Task& task, const std::string& save_dir) {
  ResumePoint resume;
  resume.restart = restart_options(cfg);
  const std::string finetune = resume.restart.finetune_from_model;
  if (const auto restore = restore_path(cfg, save_dir)) {
    resume.reader = std::make_unique<checkpoint::CheckpointReader>(*restore);
    if (!finetune.empty()) {
      check_same_finetuning(cfg, resume.reader->meta(), *restore, finetune);
      resume.restart.finetune_from_model.clear();
      resume.note =
          *restore + " exists: resuming it (checkpoint.finetune_from_model " + finetune + " is for the start)";
    }
  } else if (!finetune.empty()) {
    if (!fs::exists(finetune))
      throw Error::for_key("checkpoint.finetune_from_model", finetune + ": no such checkpoint");
    resume.reader = std::make_unique<checkpoint::CheckpointReader>(finetune);
  }
  if (!resume.reader) return resume;
  // convert-checkpoint's inference-only checkpoints keep no fp32 weights or optimizer.
  const std::string inference_precision = resume.reader->meta().get("inference_precision");
  if (!inference_precision.empty())
    throw Error(resume.reader->path() + ": an inference-only " + inference_precision +
                " checkpoint (convert-checkpoint); training needs the original training checkpoint");
  resume.recipe_changes = check_resume_compatible(cfg, task, resume.reader->meta(), resume.reader->path());
  return resume;
}

// 0 means "no limit" for one of them only while the other bounds the batch.
void check_batch_bounds(const core::Config& cfg) {
  if (cfg.get<int64_t>("dataset.max_tokens") == 0 && cfg.get<int64_t>("dataset.max_sentences") == 0)
    throw Error::for_key("dataset.max_tokens",
                         "0 (no limit) needs dataset.max_sentences > 0; with both unbounded the whole corpus would "
                         "be one batch");
}

void check_training_start(const core::Config& cfg, const Task& task) {
  const DistributedSetup distributed = resolve_distributed_setup(cfg);
  const ValidationRun validation(cfg, task, cfg.get<bool>("dataset.disable_validation") ? nullptr : task.valid_data(),
                                 /*rank=*/0, distributed.world_size, [](const std::string&) {});
  open_resume_point(cfg, task, checkpoint_policy(cfg).save_dir);
  check_batch_bounds(cfg);
  ema_options(cfg);
  // The trainer's parts, built on the CPU: with the recipe's precision when the workers
  // train on the CPU too (fp16 and amp fail there as in a worker), with fp32 when they
  // train on GPUs, which the supervisor leaves to them.
  auto precision = make_precision_policy(cfg, distributed.world_size);  // fp16, amp: no CUDA GPU, no run
  if (!nn::compute_device(cfg.get<bool>("common.cpu"), distributed.local_rank).is_cpu())
    precision = make_precision_policy(TrainingPrecision::fp32);
  {
    const TrainerParts parts = assemble_trainer_parts(
        cfg, task, std::move(precision),
        [](const torch::Device&) -> std::unique_ptr<GradientSync> { return std::make_unique<LocalGradientSync>(); });
  }
  core::release_free_heap_pages();  // the supervisor keeps none of the model's memory while its workers train
}

}  // namespace csan::training
