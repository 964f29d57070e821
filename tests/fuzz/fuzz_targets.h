// The libFuzzer targets of the torch-free parsers, as plain functions. tools/fuzz.sh
// builds each one with clang, libFuzzer, ASan and UBSan (libfuzzer_main.cpp calls it);
// test_fuzz_replay runs every stored input under tests/fuzz/corpus/TARGET/ (seeds and
// the inputs of past crashes) through the same function compiled with the normal
// compiler, so a fixed crash stays fixed.
//
// A target must return for any input. Bad input has to surface as csan::Error, which the
// target catches; any other exception, a crash or a sanitizer report is a bug, and so is
// InvariantBroken, which a target throws when a round trip does not round-trip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace csan::fuzz {

// core::Config: a recipe YAML, then NUL-separated `--set key=value` overrides.
void recipe(const uint8_t* data, size_t size);
// text::Dictionary: a dict.txt file.
void dictionary(const uint8_t* data, size_t size);
// data::MMapIndexedDataset: two little-endian bytes giving the .idx size, the .idx, the .bin.
void indexed_dataset(const uint8_t* data, size_t size);
// core::read_lines and utf8: a raw text file.
void text_file(const uint8_t* data, size_t size);
// scoring::score_run: an option byte, then NUL-separated reference and system files.
void score_inputs(const uint8_t* data, size_t size);
// The BLEU tokenizers, the TER normaliser, chrF's words and the three metrics on a
// hypothesis and a reference separated by a NUL byte.
void tokenizers(const uint8_t* data, size_t size);
// data::parse_conllu: a CoNLL-U file; what parses must render back to the same words.
void conllu(const uint8_t* data, size_t size);
// safetensors::Reader: a mode byte (bit 0: fill in a csan header's checksum first; bit 1:
// require one), then the file; what reads must write back and read again the same.
void safetensors(const uint8_t* data, size_t size);
// serve::parse_translate_request: a POST /translate body (csan-serve's JSON and option layer).
void serve_request(const uint8_t* data, size_t size);

// Targets that need LibTorch (tests/fuzz/torch_targets/; the libFuzzer build has them only
// when LibTorch is installed).
// checkpoint::CheckpointReader: a mode byte, then an archive, a whole file or edits to a
// valid checkpoint.
void checkpoint(const uint8_t* data, size_t size);
// foreign::read_pickle (csan-import) on any bytes.
void torch_pickle(const uint8_t* data, size_t size);

struct NamedTarget {
  const char* name;
  void (*run)(const uint8_t* data, size_t size);
};
// The torch-free targets above, by the name tools/fuzz.sh and the corpus folders use.
const std::vector<NamedTarget>& all_targets();
// The LibTorch targets (torch_targets/torch_targets.cpp).
const std::vector<NamedTarget>& torch_targets();

// --- helpers shared by the targets ---

struct InvariantBroken : std::logic_error {
  using std::logic_error::logic_error;
};
inline void expect(bool condition, const std::string& what) {
  if (!condition) throw InvariantBroken(what);
}

// The input cut at NUL bytes into at most `max_pieces` pieces (the last one keeps the rest).
std::vector<std::string> split_at_nul(const uint8_t* data, size_t size, size_t max_pieces);
// Writes `contents` to NAME in this process's scratch folder (in /dev/shm when it exists)
// and returns the path.
std::string scratch_file(const std::string& name, std::string_view contents);

}  // namespace csan::fuzz
