// Every precision of nn::Precision is one projection kind, registered under its own name:
// a precision added to the enum without its kind (or a kind registered under another
// name) fails here. The option's text parses once, and bad text is a one-line error naming
// the option and the registered precisions.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/support/error_message.h"
#include "toolkit/nn/precision.h"
#include "toolkit/nn/projection_kind.h"

namespace {

using namespace csan;
using csan::testing::message_of;

TEST(ProjectionKinds, EveryPrecisionParsesFromItsOwnNameAndHasARegisteredKind) {
  size_t precisions = 0;
  for (const nn::Precision p : nn::kPrecisions) {
    const std::string name = nn::precision_name(p);
    SCOPED_TRACE(name);
    ++precisions;
    EXPECT_EQ(nn::parse_precision(name, "--precision"), p);
    ASSERT_TRUE(nn::projection_kinds().contains(name)) << name << " has no registered projection kind";
    const nn::ProjectionKind& kind = nn::projection_kind(p);
    EXPECT_EQ(kind.precision, p);
    EXPECT_TRUE(kind.on_cpu || kind.on_cuda);
    if (p == nn::Precision::fp32) {
      EXPECT_FALSE(kind.convert) << "fp32 keeps the trainable parameters";
      continue;
    }
    ASSERT_TRUE(kind.convert);
    if (!kind.on_cpu) continue;  // fp16: its products need a GPU (gpu_decoding_test)
    // A converted weight multiplies like the float one, in its kind's precision.
    torch::manual_seed(1);
    const auto w = torch::randn({8, 16}), x = torch::randn({3, 16});
    const auto kernel = kind.convert(w);
    EXPECT_EQ(kernel->precision(), p);
    EXPECT_EQ(kernel->rows(), 8);
    EXPECT_EQ(kernel->depth(), 16);
    EXPECT_TRUE(torch::allclose(kernel->multiply(x), torch::matmul(x, w.t()), 0.1, 0.1));
    EXPECT_EQ(kernel->stored_weight().scalar_type(), kind.stored_type);
    EXPECT_EQ(kernel->scales().defined(), kind.stored_with_scales);
    if (kind.restore) {
      // What an inference checkpoint stores gives the same kernel back.
      const auto restored = kind.restore(kernel->stored_weight(), kernel->scales());
      EXPECT_TRUE(torch::equal(restored->multiply(x), kernel->multiply(x)));
    }
  }
  EXPECT_EQ(nn::projection_kinds().names().size(), precisions) << "a kind registered under no precision's name";
}

TEST(ProjectionKinds, UnknownPrecisionsAreOneLineErrorsNamingTheOptionAndTheRegisteredOnes) {
  const std::string unknown = message_of([] { nn::parse_precision("int4", "--precision"); });
  EXPECT_NE(unknown.find("--precision: unknown value 'int4' (bf16, fp16, fp32, int8)"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find('\n'), std::string::npos);
  EXPECT_NE(message_of([] { nn::parse_precision("amp", "--precision"); }).find("--precision: amp is for training"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              nn::parse_precision("INT8", "model.pt: inference_precision");
            }).find("model.pt: inference_precision: unknown value 'INT8'"),
            std::string::npos);
}

}  // namespace
