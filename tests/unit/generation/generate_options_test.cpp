// csan-generate's alignment and constraint options and constrained input lines, refused in
// one line naming the option or the line (in-process: the same checks the CLI runs first).
#include <gtest/gtest.h>

#include <string>

#include "toolkit/core/error.h"
#include "toolkit/generation/constraints.h"
#include "toolkit/generation/text_codec.h"
#include "toolkit/tasks/translation_generate_run.h"

namespace {

using namespace csan;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GenerateOptions, AlignmentAndConstraintOptionsAreCheckedNamingTheOption) {
  auto options = [] {
    tasks::GenerateOptions o;
    o.paths = {"model.pt"};
    o.input = "-";
    return o;
  };
  auto refused = [&](const std::function<void(tasks::GenerateOptions&)>& set) {
    tasks::GenerateOptions o = options();
    set(o);
    return error_of([&] { tasks::validate_generate_options(o); });
  };
  EXPECT_EQ(refused([](auto&) {}), "(no error)");
  EXPECT_EQ(refused([](auto& o) { o.print_alignment = "both"; }),
            "--print-alignment: unknown kind 'both' (hard or soft)");
  EXPECT_EQ(refused([](auto& o) { o.alignment_words = true; }), "--alignment-words: needs --print-alignment");
  EXPECT_EQ(refused([](auto& o) { o.search.alignment_layer = 2; }), "--alignment-layer: needs --print-alignment");
  EXPECT_EQ(refused([](auto& o) {
              o.print_alignment = "hard", o.output_format = "plain";
            }).rfind("--print-alignment: prints A- lines", 0),
            0u);
  EXPECT_EQ(refused([](auto& o) { o.constraints = "any"; }),
            "--constraints: unknown order 'any' (ordered or unordered)");
  EXPECT_EQ(refused([](auto& o) {
              o.constraints = "ordered", o.input.clear(), o.data_dir = "bin";
            }).rfind("--constraints: needs --input", 0),
            0u);
  EXPECT_EQ(refused([](auto& o) { o.constraints = "unordered", o.search.sampling = true; }),
            "--constraints: needs beam search (not --sampling)");
}

TEST(GenerateOptions, ConstrainedLinesAreSplitAndBadOnesNamed) {
  text::Dictionary dict;
  for (const char* word : {"a", "b", "c"}) dict.add_symbol(word);
  const generation::TextCodec codec(dict, nullptr);
  const auto line = generation::split_constraints("x y\tb c\ta", codec, dict.unk(), "in.txt", 3);
  EXPECT_EQ(line.source, "x y");
  EXPECT_EQ(line.constraints, (generation::Constraints{{dict.index("b"), dict.index("c")}, {dict.index("a")}}));
  EXPECT_TRUE(generation::split_constraints("x y", codec, dict.unk(), "in.txt", 3).constraints.empty());
  auto split = [&](const std::string& text) {
    return error_of([&] { generation::split_constraints(text, codec, dict.unk(), "in.txt", 7); });
  };
  EXPECT_EQ(split("x\t"), "in.txt:7: constraint 1 is empty (constraints are tab-separated after the source)");
  EXPECT_EQ(split("x\ta\t "), "in.txt:7: constraint 2 is empty (constraints are tab-separated after the source)");
  EXPECT_EQ(split("x\ta zz"), "in.txt:7: constraint 1 'a zz' has a token outside the target vocabulary");
  std::string many = "x";
  for (int i = 0; i < 65; ++i) many += "\ta";
  EXPECT_EQ(split(many), "in.txt:7: 65 constraints, at most 64");
}

}  // namespace
