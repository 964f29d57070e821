// SentencePiece inside a LibTorch process. libsentencepiece carries its own protobuf,
// which aborts a process that also links LibTorch's; so the model is served by a small
// module (csan_spm_isolated, see spm_module/) loaded with dlmopen() into a link
// namespace of its own, and only bytes cross the boundary.
#pragma once

#include <memory>
#include <string>

namespace csan::generation {

class IsolatedSentencePiece {
 public:
  // Loads the module found next to the running executable (or at $CSAN_SPM_MODULE) and
  // the serialized model `bytes`; `origin` names the model in errors. Throws csan::Error
  // with one line when the module cannot be loaded or the model is corrupt.
  IsolatedSentencePiece(const std::string& bytes, const std::string& origin);
  ~IsolatedSentencePiece();
  IsolatedSentencePiece(const IsolatedSentencePiece&) = delete;
  IsolatedSentencePiece& operator=(const IsolatedSentencePiece&) = delete;

  // Pieces of `text` joined by single spaces ("▁the ▁ca t"). Not thread-safe.
  std::string encode(const std::string& text) const;
  // Text of space-separated pieces.
  std::string decode(const std::string& pieces) const;

 private:
  struct Module;
  std::unique_ptr<Module> module_;
  void* handle_ = nullptr;
  std::string origin_;
};

// The module's path: $CSAN_SPM_MODULE if set, else beside /proc/self/exe.
std::string isolated_sentencepiece_module_path();

}  // namespace csan::generation
