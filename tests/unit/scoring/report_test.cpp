// Python-exact formatting (f"{x:.Nf}", repr(float), json.dumps strings), signatures,
// single-system outputs and tabulate tables. Whole outputs of real runs are compared with
// sacreBLEU's in tests/cli/score_test.cpp; these pin down the building blocks.
#include "toolkit/scoring/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "toolkit/core/error.h"
#include "toolkit/scoring/report_format.h"
#include "toolkit/scoring/report_table.h"

namespace csan::scoring {
namespace {

TEST(PythonFormat, FixedRoundsTheBinaryValue) {
  EXPECT_EQ(format_fixed(84.16347434403833, 1), "84.2");
  EXPECT_EQ(format_fixed(0.125, 2), "0.12");  // exact tie: to even
  EXPECT_EQ(format_fixed(0.375, 2), "0.38");
  EXPECT_EQ(format_fixed(2.675, 2), "2.67");  // 2.675 is 2.67499999... in binary
  EXPECT_EQ(format_fixed(100.0, 0), "100");
  EXPECT_EQ(format_fixed(-0.0, 1), "-0.0");
  EXPECT_THROW(format_fixed(1.0, -1), Error);
}

TEST(PythonFormat, ReprIsShortestRoundTrip) {
  EXPECT_EQ(python_repr(84.2), "84.2");
  EXPECT_EQ(python_repr(100.0), "100.0");
  EXPECT_EQ(python_repr(0.0), "0.0");
  EXPECT_EQ(python_repr(-0.0), "-0.0");
  EXPECT_EQ(python_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_repr(85.58216447927889), "85.58216447927889");
  EXPECT_EQ(python_repr(0.000999000999000999), "0.000999000999000999");
  EXPECT_EQ(python_repr(0.0001), "0.0001");
  EXPECT_EQ(python_repr(1e-05), "1e-05");
  EXPECT_EQ(python_repr(1.5e-07), "1.5e-07");
  EXPECT_EQ(python_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_repr(1e16), "1e+16");
  EXPECT_EQ(python_repr(1.2345e100), "1.2345e+100");
  EXPECT_EQ(json_number(std::nullopt), "null");
  EXPECT_EQ(round_to_width(7.365601683566099, 4), 7.3656);
}

TEST(PythonFormat, JsonStringsEscapeLikeTheJsonModule) {
  EXPECT_EQ(json_string("a\"b\\c\n\t\x01", false), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  EXPECT_EQ(json_string("μ = 1 ± 2", false), "\"μ = 1 ± 2\"");
  EXPECT_EQ(json_string("μ ±", true), "\"\\u03bc \\u00b1\"");
  EXPECT_EQ(json_string("\xF0\x9F\x98\x80", true), "\"\\ud83d\\ude00\"");  // U+1F600 as a surrogate pair
  EXPECT_EQ(json_string("\x7f", true), "\"\\u007f\"");
  EXPECT_EQ(json_string("\x7f", false), "\"\x7f\"");
  EXPECT_EQ(code_points("μ ± x"), 5u);
}

// Why sacreBLEU's numbers keep csan's own formatter while its strings go through
// nlohmann: nlohmann writes 1e15 as "1e+15" (Python: "1000000000000000.0") and NaN as
// null (Python: NaN), so its output would not be sacreBLEU's to the character.
TEST(PythonFormat, NlohmannNumbersAreNotPythons) {
  EXPECT_EQ(nlohmann::json(1e15).dump(), "1e+15");
  EXPECT_EQ(python_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(nlohmann::json(std::nan("")).dump(), "null");
  EXPECT_EQ(json_number(std::nan("")), "NaN");
  EXPECT_EQ(json_number(-INFINITY), "-Infinity");
}

class FakeBleu : public Metric {
 public:
  std::string name() const override { return "BLEU"; }
  std::vector<SignatureField> signature_fields() const override {
    return {{"case", "c", "mixed"}, {"eff", "e", "no"}, {"tok", "tok", "13a"}, {"smooth", "s", "exp"}};
  }
  std::vector<Stats> segment_stats(const std::vector<std::string>&,
                                   const std::vector<std::vector<std::string>>&) const override {
    return {};
  }
  double score(const Stats&) const override { return 0.0; }
  double score_float32(const std::vector<float>&) const override { return 0.0; }
  bool integer_stats() const override { return true; }
};

TEST(Signature, CommonFieldsWrapTheMetricsOwn) {
  const FakeBleu bleu;
  EXPECT_EQ(format_signature(make_signature(bleu, {}), false),
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  CommonSignature bootstrap{"2", std::string("1000"), std::nullopt, std::string("12345")};
  EXPECT_EQ(format_signature(make_signature(bleu, bootstrap), false),
            "nrefs:2|bs:1000|seed:12345|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0");
  EXPECT_EQ(format_signature(make_signature(bleu, bootstrap), true),
            "#:2|bs:1000|rs:12345|c:mixed|e:no|tok:13a|s:exp|v:2.6.0");
  CommonSignature randomization{"1", std::nullopt, std::string("10000"), std::string("none")};
  EXPECT_EQ(format_signature(make_signature(bleu, randomization), true),
            "#:1|ar:10000|rs:none|c:mixed|e:no|tok:13a|s:exp|v:2.6.0");
}

TEST(ScoreFormat, TextScoreOnlyAndJson) {
  const ScoreReport report{"chrF2", 92.16309825264914, Confidence{92.17152507514986, 0.8444401126464953}, ""};
  EXPECT_EQ(format_score(report, 1, false, "nrefs:1|version:2.6.0", false),
            "chrF2|nrefs:1|version:2.6.0 = 92.2 (μ = 92.2 ± 0.8)");
  EXPECT_EQ(format_score(report, 2, true, "nrefs:1", false), "92.16 (μ = 92.17 ± 0.84)");
  EXPECT_EQ(format_score(report, 1, false, "nrefs:1|version:2.6.0", true),
            "{\n \"name\": \"chrF2\",\n \"score\": 92.2,\n \"signature\": \"nrefs:1|version:2.6.0\",\n"
            " \"confidence_mean\": 92.2,\n \"confidence_var\": 0.8,\n \"confidence\": \"μ = 92.2 ± 0.8\",\n"
            " \"nrefs\": \"1\",\n \"version\": \"2.6.0\"\n}");
  // A bootstrap mean of 0 prints no interval.
  const ScoreReport zero{"BLEU", 0.0, Confidence{0.0, 0.0}, "0.0/0.0/0.0/0.0"};
  EXPECT_EQ(format_score(zero, 1, false, "nrefs:1", false), "BLEU|nrefs:1 = 0.0 0.0/0.0/0.0/0.0");
}

TEST(SingleSystemOutput, AlignsTextLinesOnTheFirstEquals) {
  EXPECT_EQ(single_system_output({"BLEU|a = 1.0 x", "chrF2|abc = 2.0"}, false), "   BLEU|a = 1.0 x\nchrF2|abc = 2.0\n");
  EXPECT_EQ(single_system_output({"84.2", "92.2"}, false), "84.2\n92.2\n");
  EXPECT_EQ(single_system_output({"84.2", "92.2"}, true), "[\n84.2,\n92.2\n]\n");
  EXPECT_EQ(single_system_output({"{\n}"}, true), "{\n}\n");
}

TEST(Tabulate, FancyGridCentresAndPadsMultilineCells) {
  const std::string table =
      tabulate({"System", "BLEU"}, {{"a", "85.6"}, {"long_name", "84.2\n(p = 0.0939)"}}, "fancy_grid", 1);
  EXPECT_EQ(table,
            "╒═══════════╤══════════════╕\n"
            "│    System │     BLEU     │\n"
            "╞═══════════╪══════════════╡\n"
            "│         a │     85.6     │\n"
            "├───────────┼──────────────┤\n"
            "│ long_name │     84.2     │\n"
            "│           │ (p = 0.0939) │\n"
            "╘═══════════╧══════════════╛");
}

TEST(Tabulate, LatexEscapesAfterMeasuring) {
  EXPECT_EQ(tabulate({"System", "chrF2"}, {{"sys_a", "92.8"}}, "latex_booktabs", 1),
            "\\begin{tabular}{rc}\n\\toprule\n   System &  chrF2  \\\\\n\\midrule\n    sys\\_a &  92.8   \\\\\n"
            "\\bottomrule\n\\end{tabular}");
}

TEST(Tabulate, NumericColumnsAreReformatted) {
  // tabulate parses a column of numbers and prints floats with floatfmt.
  EXPECT_EQ(tabulate({"System", "X"}, {{"1.25", "7"}, {"2", "8"}}, "fancy_grid", 1),
            "╒══════════╤═════╕\n│   System │  X  │\n╞══════════╪═════╡\n│      1.2 │  7  │\n"
            "├──────────┼─────┤\n│      2.0 │  8  │\n╘══════════╧═════╛");
}

}  // namespace
}  // namespace csan::scoring
