// The SentencePiece module csan-generate loads with dlmopen() into a link namespace of its
// own, behind a C ABI: libsentencepiece brings its own protobuf, which cannot share a
// namespace with LibTorch's (the process aborts at start-up). Nothing crosses the
// boundary but plain bytes; memory allocated here is freed here.
//
// The extension is .cc on purpose: toolkit/generation/*.cpp is globbed into the LibTorch
// library csan_generation, and this file must stay out of it (see CsanSpmModule.cmake).
#include <sentencepiece_processor.h>

#include <cstddef>
#include <string>
#include <vector>

namespace {

struct Handle {
  sentencepiece::SentencePieceProcessor processor;
  std::string result;  // the last answer, valid until the next call on this handle
  std::string error;
};

std::vector<std::string> split_on_spaces(const char* text, size_t size) {
  std::vector<std::string> pieces;
  size_t i = 0;
  while (i < size) {
    while (i < size && text[i] == ' ') ++i;
    const size_t start = i;
    while (i < size && text[i] != ' ') ++i;
    if (i > start) pieces.emplace_back(text + start, i - start);
  }
  return pieces;
}

}  // namespace

extern "C" {

// Returns a handle, or null with the reason copied into `error` (NUL-terminated).
__attribute__((visibility("default"))) void* csan_spm_create(const char* model, size_t size, char* error,
                                                             size_t error_size) {
  auto* handle = new Handle;
  const auto status = handle->processor.LoadFromSerializedProto(std::string(model, size));
  if (status.ok()) return handle;
  const std::string message = status.ToString();
  delete handle;
  if (error_size > 0) {
    const size_t n = message.size() < error_size - 1 ? message.size() : error_size - 1;
    message.copy(error, n);
    error[n] = '\0';
  }
  return nullptr;
}

__attribute__((visibility("default"))) void csan_spm_destroy(void* handle) { delete static_cast<Handle*>(handle); }

// Pieces of `text` joined by single spaces (pieces never contain one). Returns 0 on
// success; otherwise csan_spm_error() says why. *out stays valid until the next call.
__attribute__((visibility("default"))) int csan_spm_encode(void* opaque, const char* text, size_t size,
                                                           const char** out, size_t* out_size) {
  auto* handle = static_cast<Handle*>(opaque);
  std::vector<std::string> pieces;
  const auto status = handle->processor.Encode(std::string(text, size), &pieces);
  if (!status.ok()) {
    handle->error = status.ToString();
    return 1;
  }
  handle->result.clear();
  for (const auto& piece : pieces) {
    if (!handle->result.empty()) handle->result += ' ';
    handle->result += piece;
  }
  *out = handle->result.data();
  *out_size = handle->result.size();
  return 0;
}

// Text of space-separated `pieces`; same contract as csan_spm_encode.
__attribute__((visibility("default"))) int csan_spm_decode(void* opaque, const char* pieces, size_t size,
                                                           const char** out, size_t* out_size) {
  auto* handle = static_cast<Handle*>(opaque);
  const auto status = handle->processor.Decode(split_on_spaces(pieces, size), &handle->result);
  if (!status.ok()) {
    handle->error = status.ToString();
    return 1;
  }
  *out = handle->result.data();
  *out_size = handle->result.size();
  return 0;
}

__attribute__((visibility("default"))) const char* csan_spm_error(void* handle) {
  return static_cast<Handle*>(handle)->error.c_str();
}

}  // extern "C"
