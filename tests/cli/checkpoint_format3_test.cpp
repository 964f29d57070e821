// Checkpoint format 3 end to end, from a format 2 checkpoint csan wrote before it
// (tests/data/format2-tiny, with its data): convert-checkpoint --format 3 rewrites training
// and inference-only checkpoints, which then decode in every precision exactly as the
// originals and resume bit-identically; csan-generate refuses each kind of damaged or
// unfitting format 3 file in one line naming the file and the tensor or key.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "cli_runner.h"
#include "toolkit/safetensors/reader.h"
#include "toolkit/safetensors/writer.h"

namespace fs = std::filesystem;
using namespace csan::testing;
namespace st = csan::safetensors;

namespace {

const std::string kFixture = std::string(CSAN_SOURCE_DIR) + "/tests/data/format2-tiny";

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }
bool is_one_line(const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

RunResult convert(const std::string& input, const std::string& output,
                  std::vector<std::string> extra = {"--format", "3"}) {
  std::vector<std::string> args = {tool("convert-checkpoint"), "--input", input, "--output", output};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

RunResult translate(const std::string& checkpoint, const std::string& precision = "fp32") {
  return run({bin("csan-generate"), "--path", checkpoint, "--input", kFixture + "/test.src", "--output-format", "plain",
              "--precision", precision});
}

// The format 3 header's first bytes after the length: what a csan reader recognizes.
bool is_format3(const std::string& path) {
  const std::string bytes = slurp(path);
  return bytes.size() > 40 && bytes.compare(8, 16, "{\"__metadata__\":") == 0;
}

class Format3Cli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("checkpoint_format3"); }
  std::string dir_;
};

// The same model in both formats decodes the same in fp32, bf16 and int8: a training
// checkpoint converted at load, and inference-only bf16 and int8 checkpoints (format 2
// ones converted by --format 3, and format 3 ones written by --precision).
TEST_F(Format3Cli, ConvertedCheckpointsDecodeAsTheirFormat2Originals) {
  const std::string f3 = dir_ + "/checkpoint.f3.pt";
  auto r = convert(kFixture + "/checkpoint.pt", f3);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_TRUE(is_format3(f3));
  for (const std::string precision : {"fp32", "bf16", "int8"}) {
    const auto before = translate(kFixture + "/checkpoint.pt", precision), after = translate(f3, precision);
    ASSERT_EQ(before.exit_code, 0) << describe(before);
    ASSERT_EQ(after.exit_code, 0) << describe(after);
    EXPECT_FALSE(before.out.empty());
    EXPECT_EQ(after.out, before.out) << precision;
  }
  for (const std::string precision : {"bf16", "int8"}) {
    const std::string original = kFixture + "/" + precision + ".pt";
    const std::string rewritten = dir_ + "/" + precision + ".f3.pt", written = dir_ + "/" + precision + ".new.pt";
    r = convert(original, rewritten);
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    r = convert(f3, written, {"--precision", precision});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    ASSERT_TRUE(is_format3(rewritten) && is_format3(written));
    const auto expected = translate(original, precision);
    ASSERT_EQ(expected.exit_code, 0) << describe(expected);
    for (const auto& file : {rewritten, written}) {
      const auto got = translate(file, precision);
      ASSERT_EQ(got.exit_code, 0) << describe(got);
      EXPECT_EQ(got.out, expected.out) << file;
      EXPECT_NE(got.err.find("precision " + precision + ": "), std::string::npos) << got.err;
    }
  }
  r = convert(kFixture + "/checkpoint.pt", dir_ + "/x.pt", {"--format", "2"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--format 2"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/x.pt"));
}

// Resuming from the converted checkpoint ends where resuming from the format 2 original
// does: every tensor (weights, optimizer state by name, RNG states) bit-identical.
TEST_F(Format3Cli, ConvertedTrainingCheckpointResumesAsTheOriginal) {
  const std::string data = dir_ + "/bin";
  fs::copy(kFixture + "/bin", data);
  const std::string from2 = dir_ + "/from2", from3 = dir_ + "/from3";
  fs::create_directories(from2);
  fs::create_directories(from3);
  fs::copy_file(kFixture + "/checkpoint.pt", from2 + "/checkpoint_last.pt");
  auto r = convert(kFixture + "/checkpoint.pt", from3 + "/checkpoint_last.pt");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const auto& save : {from2, from3}) {
    r = run({bin("csan-train"), std::string(CSAN_SOURCE_DIR) + "/recipes/tiny-transformer.yaml",
             "--data",          data,
             "--save-dir",      save,
             "--max-tokens",    "512",
             "--max-update",    "7",
             "--set",           "model.embed_dim=16",
             "--set",           "model.ffn_dim=32",
             "--set",           "model.heads=2",
             "--set",           "model.encoder_layers=1",
             "--set",           "model.decoder_layers=1"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_NE(r.err.find("resumed from " + save + "/checkpoint_last.pt"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(", update 3\n"), std::string::npos) << r.err;
  }
  const st::Reader a(from2 + "/checkpoint_last.pt", st::ChecksumPolicy::kRequire);
  const st::Reader b(from3 + "/checkpoint_last.pt", st::ChecksumPolicy::kRequire);
  EXPECT_EQ(a.metadata().at("csan.progress"), b.metadata().at("csan.progress"));
  EXPECT_NE(a.metadata().at("csan.progress").find("\"num_updates\":7"), std::string::npos);
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  size_t optimizer_state = 0, rng = 0;
  for (const auto& t : a.tensors()) {
    const auto* other = b.find(t.name);
    ASSERT_NE(other, nullptr) << t.name;
    ASSERT_EQ(other->size, t.size) << t.name;
    EXPECT_EQ(std::memcmp(other->data, t.data, t.size), 0) << t.name << " differs";
    optimizer_state += t.name.rfind("optimizer.", 0) == 0;
    rng += t.name.rfind("rng.", 0) == 0;
  }
  EXPECT_GT(optimizer_state, 10u);
  EXPECT_EQ(rng, 1u);
}

// A copy of `source` (format 3) rewritten through csan's own writer, so that its checksum
// holds: `edit` changes the tensors (name -> dtype, shape) and metadata before writing.
struct Edit {
  std::function<bool(const std::string& name)> drop = [](const std::string&) { return false; };
  std::string retyped;   // this tensor stored as I32 (same bytes)
  std::string reshaped;  // this tensor stored flat
  std::string dropped_key;
};
void rewrite(const std::string& source, const std::string& out, const Edit& edit) {
  const st::Reader in(source, st::ChecksumPolicy::kRequire);
  st::Writer writer;
  for (const auto& [key, value] : in.metadata())
    if (key != edit.dropped_key) writer.set_metadata(key, value);
  for (const auto& t : in.tensors()) {
    if (edit.drop(t.name)) continue;
    st::Dtype dtype = t.dtype;
    std::vector<int64_t> shape = t.shape;
    if (t.name == edit.retyped) dtype = st::Dtype::kI32;
    if (t.name == edit.reshaped) shape = {t.elements()};
    writer.add(t.name, dtype, shape, t.data);
  }
  writer.write(out);
}

TEST_F(Format3Cli, DamagedOrUnfittingCheckpointsAreOneLineErrorsNamingFileAndTensor) {
  const std::string good = dir_ + "/good.pt";
  auto r = convert(kFixture + "/checkpoint.pt", good);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::string weight;
  const st::Reader reader(good);
  for (const auto& t : reader.tensors())
    if (t.name.find("fc1.weight") != std::string::npos && t.name.rfind("optimizer.", 0) != 0) weight = t.name;
  ASSERT_FALSE(weight.empty());
  const std::string bytes = slurp(good);
  const auto refused = [&](const std::string& file, const std::vector<std::string>& parts) {
    const auto result = translate(file);
    EXPECT_NE(result.exit_code, 0) << file;
    EXPECT_TRUE(is_one_line(result.err)) << result.err;
    EXPECT_NE(result.err.find("csan-generate: error: " + file + ": "), std::string::npos) << result.err;
    for (const auto& part : parts) EXPECT_NE(result.err.find(part), std::string::npos) << part << " in " << result.err;
  };

  std::string flipped = bytes;
  flipped[bytes.size() - 100] ^= 0x10;  // inside the last tensor's bytes
  spit(dir_ + "/flipped.pt", flipped);
  refused(dir_ + "/flipped.pt", {"checksum mismatch", "corrupt"});

  spit(dir_ + "/truncated.pt", bytes.substr(0, bytes.size() * 2 / 3));
  refused(dir_ + "/truncated.pt", {"corrupt"});
  spit(dir_ + "/short.pt", bytes.substr(0, 5));
  refused(dir_ + "/short.pt", {"shorter than the 8-byte header length"});

  Edit missing;
  missing.drop = [&](const std::string& name) { return name == weight; };
  rewrite(good, dir_ + "/missing.pt", missing);
  refused(dir_ + "/missing.pt", {"no tensor '" + weight + "'"});

  Edit reshaped;
  reshaped.reshaped = weight;
  rewrite(good, dir_ + "/reshaped.pt", reshaped);
  refused(dir_ + "/reshaped.pt", {"tensor '" + weight + "' is [", "in the file", "in the model"});

  Edit retyped;
  retyped.retyped = weight;
  rewrite(good, dir_ + "/retyped.pt", retyped);
  refused(dir_ + "/retyped.pt", {"tensor '" + weight + "' is I32 in the file, F32 in the model"});

  for (const std::string key : {"csan.recipe", "csan.format", "csan.progress"}) {
    Edit no_key;
    no_key.dropped_key = key;
    rewrite(good, dir_ + "/no-key.pt", no_key);
    refused(dir_ + "/no-key.pt", {"__metadata__ has no '" + key + "'"});
  }

  // The untouched rewrite still decodes: the edits, not the rewriting, were refused.
  rewrite(good, dir_ + "/same.pt", Edit{});
  EXPECT_EQ(translate(dir_ + "/same.pt").out, translate(good).out);
}

}  // namespace
