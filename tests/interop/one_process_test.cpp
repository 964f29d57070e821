// SentencePiece, LibTorch and the scorer in one process. Debian's libsentencepiece exported
// the protobuf-lite it bundles, which aborted any process that also loaded LibTorch's
// libprotobuf.so.32 (before main()); csan now links a static SentencePiece built against
// that same libprotobuf (tools/build-sentencepiece.sh). This binary links the whole library:
// it trains and loads a SentencePiece model, encodes and decodes with it, runs a LibTorch
// forward and backward pass on the pieces, and scores BLEU with the SentencePiece tokenizer.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "toolkit/core/text_file.h"
#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/resampling.h"
#include "toolkit/text/sentencepiece.h"

namespace fs = std::filesystem;

namespace csan {
namespace {

// The files mapped into this process whose name contains `part`.
std::set<std::string> mapped_files(const std::string& part) {
  std::ifstream in("/proc/self/maps");
  std::set<std::string> files;
  for (std::string line; std::getline(in, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find(part, slash) != std::string::npos) files.insert(line.substr(slash));
  }
  return files;
}

class OneProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("csan-one-process-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    refs_ = read_lines(std::string(CSAN_SHARED_DIR) + "/vectors/sacrebleu/cases/de500/ref.de");
    text::SentencePieceTrainOptions options;
    options.vocab_size = 300;
    model_path_ = (dir_ / "de.model").string();
    text::SentencePieceModel::train({&refs_}, options).save(model_path_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::vector<std::string> refs_;
  std::string model_path_;
};

TEST_F(OneProcess, SentencePieceLibTorchAndScorerWorkTogether) {
  // SentencePiece: the model file parses (protobuf) and round-trips text.
  const auto model = text::SentencePieceModel::load(model_path_);
  ASSERT_EQ(model.vocab_size(), 300);
  const std::string line = refs_[0];
  const auto pieces = model.encode(line);
  ASSERT_GT(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].rfind("\u2581", 0), 0u) << pieces[0];
  EXPECT_EQ(model.decode(pieces), line);
  std::vector<int> ids;
  model.encode_ids(line, ids);
  ASSERT_EQ(ids.size(), pieces.size());

  // LibTorch: an embedding and a linear layer over the piece ids, forward and backward.
  torch::manual_seed(1);
  torch::nn::Embedding embedding(model.vocab_size(), 8);
  torch::nn::Linear linear(8, 4);
  const auto input = torch::tensor(std::vector<int64_t>(ids.begin(), ids.end()), torch::kLong);
  const auto output = linear(embedding(input));
  ASSERT_EQ(output.sizes(), (std::vector<int64_t>{static_cast<int64_t>(ids.size()), 4}));
  output.pow(2).sum().backward();
  // Only the rows of the pieces in the line get a gradient.
  const auto touched = embedding->weight.grad().abs().sum(1).gt(0).sum().item<int64_t>();
  std::vector<int> distinct(ids);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(touched, static_cast<int64_t>(distinct.size()));

  // The scorer with the SentencePiece tokenizer (sacreBLEU's spm/flores101): the
  // references against themselves score 100, against their first half fewer, and the
  // pieces it counts are the model's.
  scoring::BleuOptions options;
  options.tokenize = "spm";
  options.spm_model = model_path_;
  const scoring::Bleu bleu(options);
  const std::vector<std::string> refs(refs_.begin(), refs_.begin() + 100);
  EXPECT_NEAR(bleu.score(scoring::sum_stats(bleu.segment_stats(refs, {refs}))), 100.0, 1e-9);
  std::vector<std::string> halves;
  for (const auto& r : refs) halves.push_back(r.substr(0, r.rfind(' ', r.size() / 2)));  // whole words
  const auto sum = scoring::sum_stats(bleu.segment_stats(halves, {refs}));
  EXPECT_LT(bleu.score(sum), 60.0);
  EXPECT_GT(bleu.score(sum), 5.0);
  EXPECT_EQ(bleu.segment_stats({line}, {{line}})[0][0], static_cast<double>(pieces.size()));

  // One protobuf library in the process (Debian's LibTorch loads libprotobuf.so.32; a pip
  // LibTorch keeps its own inside), no libprotobuf-lite beside it, no libsentencepiece.so.
  EXPECT_EQ(mapped_files("libtorch_cpu").size(), 1u);
  EXPECT_LE(mapped_files("libprotobuf").size(), 1u);
  EXPECT_TRUE(mapped_files("libprotobuf-lite").empty());
  EXPECT_TRUE(mapped_files("libsentencepiece").empty());
}

}  // namespace
}  // namespace csan
