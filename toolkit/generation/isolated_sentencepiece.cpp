#include "toolkit/generation/isolated_sentencepiece.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>

#include "toolkit/core/error.h"

namespace csan::generation {

namespace {

constexpr const char* kModuleName = "libcsan_spm_isolated.so";

using CreateFn = void* (*)(const char*, size_t, char*, size_t);
using DestroyFn = void (*)(void*);
using CodeFn = int (*)(void*, const char*, size_t, const char**, size_t*);
using ErrorFn = const char* (*)(void*);

}  // namespace

struct IsolatedSentencePiece::Module {
  void* library = nullptr;
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  CodeFn encode = nullptr, decode = nullptr;
  ErrorFn error = nullptr;
};

std::string isolated_sentencepiece_module_path() {
  if (const char* path = std::getenv("CSAN_SPM_MODULE"); path && *path) return path;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(kModuleName) : (exe.parent_path() / kModuleName).string();
}

IsolatedSentencePiece::IsolatedSentencePiece(const std::string& bytes, const std::string& origin)
    : module_(std::make_unique<Module>()), origin_(origin) {
  const std::string path = isolated_sentencepiece_module_path();
  // A fresh namespace gets its own libstdc++ and protobuf; RTLD_LOCAL keeps its symbols
  // from ever resolving LibTorch's references (or the reverse).
  module_->library = dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module_->library) {
    const char* why = dlerror();
    throw Error(origin + ": cannot load the SentencePiece module " + path + " (" + (why ? why : "unknown error") +
                "); binarize the text with csan-preprocess and translate it with --data");
  }
  auto symbol = [&](const char* name) {
    void* address = dlsym(module_->library, name);
    if (!address) {
      dlclose(module_->library);
      throw Error(path + ": not a csan SentencePiece module (no " + name + ")");
    }
    return address;
  };
  module_->create = reinterpret_cast<CreateFn>(symbol("csan_spm_create"));
  module_->destroy = reinterpret_cast<DestroyFn>(symbol("csan_spm_destroy"));
  module_->encode = reinterpret_cast<CodeFn>(symbol("csan_spm_encode"));
  module_->decode = reinterpret_cast<CodeFn>(symbol("csan_spm_decode"));
  module_->error = reinterpret_cast<ErrorFn>(symbol("csan_spm_error"));
  char why[512] = "";
  handle_ = module_->create(bytes.data(), bytes.size(), why, sizeof why);
  if (!handle_) {
    dlclose(module_->library);
    throw Error(origin + ": corrupt SentencePiece model (" + why + ")");
  }
}

IsolatedSentencePiece::~IsolatedSentencePiece() {
  module_->destroy(handle_);
  // The namespace stays loaded: unloading a second libc/libstdc++ at exit gains nothing.
}

std::string IsolatedSentencePiece::encode(const std::string& text) const {
  const char* out = nullptr;
  size_t size = 0;
  if (module_->encode(handle_, text.data(), text.size(), &out, &size) != 0)
    throw Error(origin_ + ": SentencePiece cannot encode a line: " + module_->error(handle_));
  return std::string(out, size);
}

std::string IsolatedSentencePiece::decode(const std::string& pieces) const {
  const char* out = nullptr;
  size_t size = 0;
  if (module_->decode(handle_, pieces.data(), pieces.size(), &out, &size) != 0)
    throw Error(origin_ + ": SentencePiece cannot decode a hypothesis: " + module_->error(handle_));
  return std::string(out, size);
}

}  // namespace csan::generation
