#include "toolkit/checkpoint/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <stdexcept>

#include "toolkit/checkpoint/archive_check.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/mapped_file.h"

namespace csan::checkpoint {

namespace {

constexpr int64_t kFormatVersion = 2;
// Format 1: translation's fixed meta fields (still read, as the translation task's data).
const char* const kVersion1Fields[] = {"src_lang", "tgt_lang", "src_dict", "tgt_dict", "spm_model"};

// torch's zip reader does not verify CRCs, so a flipped byte inside a tensor would load
// silently. Every checkpoint therefore ends with a trailer: magic, a 64-bit hash of the
// archive bytes and their length.
constexpr char kTrailerMagic[8] = {'C', 'S', 'A', 'N', 'S', 'U', 'M', '1'};
constexpr size_t kTrailerSize = 24;

// `read(offset, length)` hears of each 16 MiB the hash has passed (the reader lets those
// pages go); the value does not depend on it.
uint64_t content_hash(const char* data, size_t size, const std::function<void(size_t, size_t)>& read = {}) {
  constexpr size_t kChunk = size_t{16} << 20;  // a multiple of the 8-byte word
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ size;
  size_t i = 0;
  while (i + 8 <= size) {
    const size_t chunk_end = std::min(size, i + kChunk);
    const size_t chunk_start = i;
    for (; i + 8 <= chunk_end; i += 8) {
      uint64_t word;
      std::memcpy(&word, data + i, 8);
      h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
      h ^= h >> 32;
    }
    if (read) read(chunk_start, i - chunk_start);
  }
  for (; i < size; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 0xC4CEB9FE1A85EC53ULL;
  return h ^ (h >> 29);
}

std::string trailer(uint64_t hash, uint64_t length) {
  std::string bytes(kTrailerMagic, sizeof kTrailerMagic);
  bytes.append(reinterpret_cast<const char*>(&hash), sizeof hash);
  bytes.append(reinterpret_cast<const char*>(&length), sizeof length);
  return bytes;
}

torch::Tensor bytes_tensor(const std::string& bytes) {
  auto t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return t;
}

std::string tensor_bytes(const torch::Tensor& t) {
  auto c = t.contiguous();
  return std::string(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), c.numel());
}

torch::Tensor int64_tensor(std::vector<int64_t> values) { return torch::tensor(values, torch::kLong); }

}  // namespace

CheckpointWriter::CheckpointWriter() { archive_.write("csan_checkpoint_version", c10::IValue(kFormatVersion)); }

void CheckpointWriter::set_meta(const CheckpointMeta& meta) {
  archive_.write("meta.task", bytes_tensor(meta.task));
  archive_.write("meta.recipe", bytes_tensor(meta.recipe_yaml));
  std::string names;
  for (const auto& [name, bytes] : meta.data) {
    if (name.empty() || name.find('\n') != std::string::npos)
      throw Error("checkpoint meta: bad data name '" + name + "'");
    names += name + "\n";
    archive_.write("meta.data." + name, bytes_tensor(bytes));
  }
  archive_.write("meta.data_names", bytes_tensor(names));
  if (!meta.run_info.empty()) archive_.write("meta.run_info", bytes_tensor(meta.run_info));
}

void CheckpointWriter::set_progress(const TrainingProgress& p) {
  archive_.write("progress.counters", int64_tensor({p.epoch, p.next_batch, p.num_updates, p.has_best ? 1 : 0,
                                                    p.bad_validations, p.nan_streak}));
  archive_.write("progress.best_metric", torch::tensor({p.best_metric}, torch::kDouble));
}

void CheckpointWriter::set_model(const torch::nn::Module& model) { model.save(section("model")); }

void CheckpointWriter::set_optimizer(const torch::optim::Optimizer& optimizer) { optimizer.save(section("optimizer")); }

torch::serialize::OutputArchive& CheckpointWriter::section(const std::string& name) {
  auto& section = sections_[name];
  if (!section) section = std::make_unique<torch::serialize::OutputArchive>();
  return *section;
}

void CheckpointWriter::capture_rng_state(const torch::Device& device) {
  auto gen = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive_.write("rng.cpu", gen.get_state());
  }
  if (device.is_cuda()) {
    auto cuda = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(cuda.mutex());
    archive_.write("rng.cuda", cuda.get_state());
  }
}

void append_trailer(std::string& archive_bytes) {
  archive_bytes += trailer(content_hash(archive_bytes.data(), archive_bytes.size()), archive_bytes.size());
}

void CheckpointWriter::write(const std::string& path) {
  for (auto& [name, section] : sections_) archive_.write("section." + name, *section);
  // Streamed into the temporary file and hashed through a map of it, not gathered in a
  // string first: that copy of the whole archive (weights and optimizer state, 0.6 GB for
  // transformer_base) stayed in the allocator's cache after the first save and raised a
  // training run's resident set by twice its size for good (tools/bench/train-memory.sh).
  AtomicFile out(path);
  uint64_t length = 0;
  // A failed write is remembered and the rest skipped, but LibTorch hears of none: its zip
  // writer cannot unwind from one (a short write makes its destructor throw: terminate).
  std::string failure;
  archive_.save_to([&](const void* data, size_t size) -> size_t {
    if (!failure.empty()) return size;
    try {
      out.write(data, size);
    } catch (const Error& e) {
      failure = e.what();
    }
    length += size;
    return size;
  });
  if (!failure.empty()) throw Error(failure);
  out.flush();
  uint64_t hash;
  {
    const core::MappedFile written(out.temp_path());
    if (written.size() != length)
      throw Error(path + ": write failed: " + std::to_string(written.size()) + " of " + std::to_string(length) +
                  " bytes reached the file");
    hash = content_hash(written.data(), length, [&written](size_t offset, size_t n) { written.release(offset, n); });
  }
  out.write(trailer(hash, length));
  out.commit();
}

CheckpointReader::CheckpointReader(const std::string& path) : path_(path) {
  if (!std::filesystem::exists(path)) throw Error(path + ": no such checkpoint", ErrorKind::missing_file);
  // The file is read where it lies (a map) rather than copied into the heap, and each part
  // LibTorch has copied out is let go at once: a training checkpoint is mostly optimizer
  // state, and a whole copy of it beside the loaded archive doubled the peak memory of
  // every reader (csan-generate, resume, average-checkpoints).
  const core::MappedFile file(path);
  const char* const bytes = file.data();
  const size_t size = file.size();
  if (size < kTrailerSize || std::memcmp(bytes + size - kTrailerSize, kTrailerMagic, sizeof kTrailerMagic) != 0)
    fail("not a csan checkpoint, or truncated or corrupt (no checksum trailer)");
  uint64_t hash, length;
  std::memcpy(&hash, bytes + size - 16, 8);
  std::memcpy(&length, bytes + size - 8, 8);
  if (length != size - kTrailerSize) fail("truncated or corrupt (length mismatch)");
  const auto let_go = [&file](size_t offset, size_t n) { file.release(offset, n); };
  if (hash != content_hash(bytes, length, let_go)) fail("corrupt (checksum mismatch)");
  const std::string problem = archive_problem(bytes, length);
  if (!problem.empty()) fail("corrupt (" + problem + ")");
  try {
    // Onto the CPU whatever device wrote it: the caller copies the weights where its
    // model lives, so a checkpoint from a GPU run loads on a CPU-only machine too.
    // LibTorch reads every record while loading (nothing later reads the map).
    archive_.load_from(
        [&](uint64_t position, void* buffer, size_t n) -> size_t {
          if (position >= length) return 0;
          n = std::min<size_t>(n, length - position);
          std::memcpy(buffer, bytes + position, n);
          let_go(position, n);
          return n;
        },
        [length] { return static_cast<size_t>(length); }, torch::Device(torch::kCPU));
  } catch (const std::exception&) {
    fail("cannot be read (truncated or corrupt?)");
  }
  std::string outside;
  try {
    outside = tensor_outside_storage(archive_);
  } catch (const std::exception&) {
    fail("cannot be read (truncated or corrupt?)");
  }
  if (!outside.empty()) fail("corrupt (tensor " + outside + " runs past its storage)");
  try {
    c10::IValue version;
    if (!archive_.try_read("csan_checkpoint_version", version)) fail("not a csan checkpoint");
    format_version_ = version.toInt();
    if (format_version_ != kFormatVersion && format_version_ != 1)
      fail("checkpoint format " + std::to_string(format_version_) + " is not supported (this csan reads 1 and " +
           std::to_string(kFormatVersion) + ")");
    auto text = [&](const std::string& key) {
      torch::Tensor t;
      archive_.read(key, t);
      return tensor_bytes(t);
    };
    meta_.recipe_yaml = text("meta.recipe");
    if (format_version_ == 1) {
      meta_.task = "translation";
      for (const char* field : kVersion1Fields) meta_.data[field] = text(std::string("meta.") + field);
    } else {
      meta_.task = text("meta.task");
      torch::Tensor run_info;
      if (archive_.try_read("meta.run_info", run_info)) meta_.run_info = tensor_bytes(run_info);
      const std::string names = text("meta.data_names");
      for (size_t start = 0, end; (end = names.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string name = names.substr(start, end - start);
        meta_.data[name] = text("meta.data." + name);
      }
    }
    torch::Tensor counters, best;
    archive_.read("progress.counters", counters);
    archive_.read("progress.best_metric", best);
    if (counters.numel() != 6 || best.numel() != 1) fail("progress record has the wrong size");
    auto c = counters.accessor<int64_t, 1>();
    progress_ = {c[0], c[1], c[2], best.item<double>(), c[3] != 0, c[4], c[5]};
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    fail("corrupt checkpoint");
  }
}

void CheckpointReader::fail(const std::string& what) const {
  throw Error(path_ + ": " + what, ErrorKind::corrupt_checkpoint);
}

namespace {

// "[4, 64]".
std::string shape_text(torch::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// Module::load would adopt every stored tensor (and its dtype). Copying instead lets a
// checkpoint written by a low-precision run (fp16/bf16 weights) load into an fp32 model
// for generation, and is exact when the dtypes agree (resume). copy_ broadcasts, so the
// shapes are checked first. With `adopt` (inference), an fp32 or int8 tensor stored on its
// own is taken over instead: the model does not hold a second copy of the weights beside the
// archive, and its own (undrawn) tensors are freed; a target that cannot be written
// (stride-0 placeholders of a model built for conversion) takes a fresh copy.
// Errors name the tensor by its full name (`prefix` is its module's, "decoder.layers.0.").
void copy_into(torch::serialize::InputArchive& archive, const std::string& prefix, const std::string& key,
               torch::Tensor& target, bool is_buffer, bool adopt) {
  torch::Tensor stored;
  if (!archive.try_read(key, stored, is_buffer)) throw std::runtime_error("no tensor " + prefix + key);
  if (stored.sizes() != target.sizes())
    throw std::runtime_error("shape mismatch for " + prefix + key + ": " + shape_text(stored.sizes()) + " stored, " +
                             shape_text(target.sizes()) + " in the model");
  const bool own_storage =
      stored.is_contiguous() && stored.storage_offset() == 0 && stored.storage().nbytes() == stored.nbytes();
  // int8 too: an int8 inference checkpoint's values (restore_inference_checkpoint makes
  // them their projections' kernels after loading).
  const bool adoptable_type = stored.scalar_type() == target.scalar_type() &&
                              (target.scalar_type() == torch::kFloat || target.scalar_type() == torch::kChar);
  if (adopt && own_storage && adoptable_type && stored.device() == target.device()) {
    target.set_data(stored);
  } else if (!target.is_contiguous()) {
    target.set_data(stored.to(target.options(), /*non_blocking=*/false, /*copy=*/true).contiguous());
  } else {
    target.copy_(stored);
  }
}

// A submodule without any parameter or buffer (an attention chain of parameter-free
// entries) may be missing from the file: checkpoints written before it existed load.
bool holds_no_tensors(const torch::nn::Module& module) {
  return module.parameters(/*recurse=*/true).empty() && module.buffers(/*recurse=*/true).empty();
}

void load_module_converting(torch::nn::Module& module, torch::serialize::InputArchive& archive,
                            const std::string& prefix, bool adopt) {
  for (auto& parameter : module.named_parameters(/*recurse=*/false))
    copy_into(archive, prefix, parameter.key(), parameter.value(), false, adopt);
  for (auto& buffer : module.named_buffers(/*recurse=*/false))
    copy_into(archive, prefix, buffer.key(), buffer.value(), true, adopt);
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive child_archive;
    if (!archive.try_read(child.key(), child_archive)) {
      if (holds_no_tensors(*child.value())) continue;
      throw std::runtime_error("no module " + prefix + child.key());
    }
    load_module_converting(*child.value(), child_archive, prefix + child.key() + ".", adopt);
  }
}

}  // namespace

void CheckpointReader::load_model(torch::nn::Module& model, bool adopt) {
  try {
    auto archive = section("model");
    torch::NoGradGuard no_grad;
    load_module_converting(model, archive, "", adopt);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {  // ours, naming the tensor
    fail(std::string("the weights do not fit this model (") + e.what() + "; different architecture or vocabulary?)");
  } catch (const std::exception&) {
    fail("the weights do not fit this model (different architecture or vocabulary?)");
  }
}

void CheckpointReader::load_optimizer(torch::optim::Optimizer& optimizer) {
  try {
    auto archive = section("optimizer");
    optimizer.load(archive);
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    fail("the optimizer state does not fit (different optimizer or model?)");
  }
}

void CheckpointReader::release_tensors() {
  archive_ = torch::serialize::InputArchive();
  released_ = true;
}

void CheckpointReader::check_not_released() const {
  if (released_) throw Error("internal: " + path_ + " read after its tensors were released");
}

bool CheckpointReader::has_section(const std::string& name) {
  check_not_released();
  torch::serialize::InputArchive nested;
  return archive_.try_read("section." + name, nested);
}

torch::serialize::InputArchive CheckpointReader::section(const std::string& name) {
  check_not_released();
  torch::serialize::InputArchive nested;
  if (!archive_.try_read("section." + name, nested)) fail("has no '" + name + "' section");
  return nested;
}

void CheckpointReader::restore_rng_state(const torch::Device& device) {
  check_not_released();
  torch::Tensor state;
  if (!archive_.try_read("rng.cpu", state)) fail("has no RNG state");
  auto gen = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(state);
  }
  torch::Tensor cuda_state;
  if (device.is_cuda() && archive_.try_read("rng.cuda", cuda_state)) {
    auto cuda = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(cuda.mutex());
    try {
      cuda.set_state(cuda_state);
    } catch (const std::exception&) {
      fail("its GPU random-number state does not fit this LibTorch");
    }
  }
}

}  // namespace csan::checkpoint
