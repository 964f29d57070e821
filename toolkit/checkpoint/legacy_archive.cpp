#include "toolkit/checkpoint/legacy_archive.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "toolkit/checkpoint/archive_check.h"
#include "toolkit/core/error.h"
#include "toolkit/core/mapped_file.h"

namespace csan::checkpoint {

namespace {

// Format 1: translation's fixed meta fields (read as the translation task's data).
const char* const kVersion1Fields[] = {"src_lang", "tgt_lang", "src_dict", "tgt_dict", "spm_model"};

// torch's zip reader does not verify CRCs, so a flipped byte inside a tensor would load
// silently: every archive checkpoint ends with a trailer.
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

std::string tensor_bytes(const torch::Tensor& t) {
  auto c = t.contiguous();
  return std::string(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), c.numel());
}

// "[4, 64]".
std::string shape_text(torch::IntArrayRef sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

// Module::load would adopt every stored tensor (and its dtype). Copying instead lets a
// checkpoint written by a low-precision run (fp16/bf16 weights) load into an fp32 model
// for generation, and is exact when the dtypes agree (resume). copy_ broadcasts, so the
// shapes are checked first. With `adopt` (inference), an fp32, bf16 or int8 tensor stored
// on its own is taken over instead: the model does not hold a second copy of the weights
// beside the archive; a target that cannot be written (stride-0 placeholders of a model
// built for conversion) takes a fresh copy. Errors name the tensor by its full name
// (`prefix` is its module's, "decoder.layers.0.").
void copy_into(torch::serialize::InputArchive& archive, const std::string& prefix, const std::string& key,
               torch::Tensor& target, bool is_buffer, bool adopt) {
  torch::Tensor stored;
  if (!archive.try_read(key, stored, is_buffer)) throw std::runtime_error("no tensor " + prefix + key);
  if (stored.sizes() != target.sizes())
    throw std::runtime_error("shape mismatch for " + prefix + key + ": " + shape_text(stored.sizes()) + " stored, " +
                             shape_text(target.sizes()) + " in the model");
  const bool own_storage =
      stored.is_contiguous() && stored.storage_offset() == 0 && stored.storage().nbytes() == stored.nbytes();
  const bool adoptable_type = stored.scalar_type() == target.scalar_type() &&
                              (target.scalar_type() == torch::kFloat || target.scalar_type() == torch::kChar ||
                               target.scalar_type() == torch::kBFloat16);
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

class LegacyArchive : public StoredCheckpoint {
 public:
  LegacyArchive(std::string path, torch::serialize::InputArchive archive)
      : path_(std::move(path)), archive_(std::move(archive)) {}

  void load_model(torch::nn::Module& model, bool adopt) override {
    try {
      auto archive = nested("model");
      if (!archive) fail("has no model");
      torch::NoGradGuard no_grad;
      load_module_converting(model, **archive, "", adopt);
    } catch (const Error&) {
      throw;
    } catch (const std::runtime_error& e) {  // ours, naming the tensor
      fail(std::string("the weights do not fit this model (") + e.what() + "; different architecture or vocabulary?)");
    } catch (const std::exception&) {
      fail("the weights do not fit this model (different architecture or vocabulary?)");
    }
  }

  void load_optimizer(torch::optim::Optimizer& optimizer, const std::vector<std::string>&) override {
    try {
      auto archive = nested("optimizer");
      if (!archive) fail("has no optimizer state");
      optimizer.load(**archive);
    } catch (const Error&) {
      throw;
    } catch (const std::exception&) {
      fail("the optimizer state does not fit (different optimizer or model?)");
    }
  }

  std::optional<SectionReader> section(const std::string& name) override {
    auto archive = nested(name);
    if (!archive) return std::nullopt;
    // Format 2 kept the int8 scales by parameter name with '.' written as '|' (parameter
    // names hold no '|').
    return SectionReader(
        path_ + ": section '" + name + "'",
        [archive = *archive](const std::string& key, torch::Tensor& value) {
          if (archive->try_read(key, value)) return true;
          std::string escaped = key;
          std::replace(escaped.begin(), escaped.end(), '.', '|');
          return escaped != key && archive->try_read(escaped, value);
        },
        [archive = *archive] {
          std::vector<std::string> keys;
          for (std::string key : archive->keys()) {
            torch::Tensor value;
            if (!archive->try_read(key, value)) continue;  // not a tensor ("training")
            std::replace(key.begin(), key.end(), '|', '.');
            keys.push_back(key);
          }
          return keys;
        });
  }

  bool has_optimizer() override { return nested("optimizer").has_value(); }

  std::vector<std::string> section_names() override {
    const std::string prefix = "section.";
    std::vector<std::string> names;
    for (const std::string& key : archive_.keys()) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      const std::string name = key.substr(prefix.size());
      if (name != "model" && name != "optimizer") names.push_back(name);
    }
    return names;
  }

  bool rng_state(const std::string& generator, torch::Tensor& state) override {
    return archive_.try_read("rng." + generator, state);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_ + ": " + what, ErrorKind::corrupt_checkpoint);
  }
  // "model" and "optimizer" are sections of the archive as the components' state is.
  std::optional<std::shared_ptr<torch::serialize::InputArchive>> nested(const std::string& name) {
    auto archive = std::make_shared<torch::serialize::InputArchive>();
    if (!archive_.try_read("section." + name, *archive)) return std::nullopt;
    return archive;
  }

  std::string path_;
  torch::serialize::InputArchive archive_;
};

}  // namespace

bool is_legacy_archive(const std::string& head) { return head.size() >= 2 && head[0] == 'P' && head[1] == 'K'; }

void append_trailer(std::string& archive_bytes) {
  const uint64_t hash = content_hash(archive_bytes.data(), archive_bytes.size());
  const uint64_t length = archive_bytes.size();
  archive_bytes.append(kTrailerMagic, sizeof kTrailerMagic);
  archive_bytes.append(reinterpret_cast<const char*>(&hash), sizeof hash);
  archive_bytes.append(reinterpret_cast<const char*>(&length), sizeof length);
}

OpenedCheckpoint open_legacy_archive(const std::string& path) {
  const auto fail = [&path](const std::string& what) {
    throw Error(path + ": " + what, ErrorKind::corrupt_checkpoint);
  };
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
  torch::serialize::InputArchive archive;
  try {
    // Onto the CPU whatever device wrote it: the caller copies the weights where its
    // model lives, so a checkpoint from a GPU run loads on a CPU-only machine too.
    // LibTorch reads every record while loading (nothing later reads the map).
    archive.load_from(
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
    outside = tensor_outside_storage(archive);
  } catch (const std::exception&) {
    fail("cannot be read (truncated or corrupt?)");
  }
  if (!outside.empty()) fail("corrupt (tensor " + outside + " runs past its storage)");
  OpenedCheckpoint opened;
  try {
    c10::IValue version;
    if (!archive.try_read("csan_checkpoint_version", version)) fail("not a csan checkpoint");
    opened.format_version = version.toInt();
    if (opened.format_version != 2 && opened.format_version != 1)
      fail("checkpoint format " + std::to_string(opened.format_version) +
           " is not supported (this csan reads 1, 2 and " + std::to_string(kFormatVersion) + ")");
    auto text = [&](const std::string& key) {
      torch::Tensor t;
      archive.read(key, t);
      return tensor_bytes(t);
    };
    CheckpointMeta& meta = opened.meta;
    meta.recipe_yaml = text("meta.recipe");
    if (opened.format_version == 1) {
      meta.task = "translation";
      for (const char* field : kVersion1Fields) meta.data[field] = text(std::string("meta.") + field);
    } else {
      meta.task = text("meta.task");
      torch::Tensor run_info;
      if (archive.try_read("meta.run_info", run_info)) meta.run_info = tensor_bytes(run_info);
      const std::string names = text("meta.data_names");
      for (size_t start = 0, end; (end = names.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string name = names.substr(start, end - start);
        meta.data[name] = text("meta.data." + name);
      }
    }
    torch::Tensor counters, best;
    archive.read("progress.counters", counters);
    archive.read("progress.best_metric", best);
    if (counters.numel() != 6 || best.numel() != 1) fail("progress record has the wrong size");
    auto c = counters.accessor<int64_t, 1>();
    opened.progress = {c[0], c[1], c[2], best.item<double>(), c[3] != 0, c[4], c[5]};
  } catch (const Error&) {
    throw;
  } catch (const std::exception&) {
    fail("corrupt checkpoint");
  }
  opened.stored = std::make_unique<LegacyArchive>(path, std::move(archive));
  return opened;
}

}  // namespace csan::checkpoint
