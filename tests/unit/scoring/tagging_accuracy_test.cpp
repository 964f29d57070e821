// csan-score --task tagging's numbers on a hand-made reference with known answers:
// accuracy on all, OOV and ambiguous words (both OOV definitions), recall per tag, the
// paired bootstrap between systems, the JSON and text reports, and misaligned systems.
#include "toolkit/scoring/tagging_accuracy.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "toolkit/core/error.h"
#include "toolkit/scoring/tagging_report.h"

namespace {

using namespace csan::scoring;

TaggedText text(const std::string& origin, std::vector<std::vector<std::string>> forms,
                std::vector<std::vector<std::string>> tags) {
  TaggedText t{origin, std::move(forms), std::move(tags), {}};
  for (size_t s = 0; s < t.forms.size(); ++s) t.first_lines.push_back(long(1 + 10 * s));
  return t;
}

const TaggedText kReference = text("ref.conllu", {{"the", "dog", "runs", "fast"}, {"a", "run", "the"}},
                                   {{"DET", "NOUN", "VERB", "ADV"}, {"DET", "NOUN", "DET"}});
const TaggedText kTrain = text("train.conllu", {{"the", "dog", "runs"}, {"runs", "run", "run"}},
                               {{"DET", "NOUN", "VERB"}, {"NOUN", "VERB", "NOUN"}});
// Wrong on "runs" and "run".
const TaggedText kSystem = text("sys.conllu", {{"the", "dog", "runs", "fast"}, {"a", "run", "the"}},
                                {{"DET", "NOUN", "NOUN", "ADV"}, {"DET", "VERB", "DET"}});

Count accuracy(const SystemScores& s, const std::string& name) {
  for (const auto& [n, c] : s.accuracies)
    if (n == name) return c;
  ADD_FAILURE() << "no " << name;
  return {};
}

TEST(TaggingAccuracy, AllOovAmbiguousAndPerTagRecall) {
  TaggingScoreSettings settings;
  settings.classes = WordClasses::from_training(kTrain);
  const auto scores = score_tagging(kReference, {kSystem}, settings);
  EXPECT_EQ(scores.words, 7);
  // OOV (not in train): "fast", "a"; ambiguous (2+ tags in train): "runs", "run".
  EXPECT_EQ(scores.oov_words, 2);
  EXPECT_EQ(scores.ambiguous_words, 2);
  const auto& s = scores.systems[0];
  EXPECT_EQ(accuracy(s, "accuracy").correct, 5);
  EXPECT_EQ(accuracy(s, "accuracy").total, 7);
  EXPECT_NEAR(accuracy(s, "accuracy").percent(), 100.0 * 5 / 7, 1e-12);
  EXPECT_EQ(accuracy(s, "oov_accuracy").correct, 2);
  EXPECT_EQ(accuracy(s, "ambiguous_accuracy").correct, 0);
  EXPECT_EQ(accuracy(s, "ambiguous_accuracy").total, 2);
  EXPECT_EQ(s.tag_recall.at("DET").correct, 3);
  EXPECT_EQ(s.tag_recall.at("NOUN").correct, 1);
  EXPECT_EQ(s.tag_recall.at("NOUN").total, 2);
  EXPECT_EQ(s.tag_recall.at("VERB").correct, 0);
  EXPECT_EQ(s.tag_recall.at("ADV").percent(), 100.0);
}

TEST(TaggingAccuracy, OovByAVocabularyAsThePaper) {
  TaggingScoreSettings settings;
  settings.classes = WordClasses::from_training(kTrain);
  settings.classes->vocabulary = std::set<std::string>{"the", "dog", "runs"};
  settings.classes->oov_source = "dict.words.txt";
  const auto scores = score_tagging(kReference, {kSystem}, settings);
  // OOV: "fast", "a" and "run" (seen in train but not in the vocabulary); ambiguous:
  // "runs" only (an OOV word is never ambiguous).
  EXPECT_EQ(scores.oov_words, 3);
  EXPECT_EQ(accuracy(scores.systems[0], "oov_accuracy").correct, 2);
  EXPECT_EQ(scores.ambiguous_words, 1);
  EXPECT_EQ(accuracy(scores.systems[0], "ambiguous_accuracy").correct, 0);
}

TEST(TaggingAccuracy, WithoutTrainingDataOnlyAccuracyAndRecall) {
  const auto scores = score_tagging(kReference, {kSystem, kReference}, {});
  EXPECT_FALSE(scores.classes);
  ASSERT_EQ(scores.systems[0].accuracies.size(), 1u);
  EXPECT_EQ(accuracy(scores.systems[1], "accuracy").correct, 7);
}

// 200 sentences: the system fixes 40 of the baseline's errors, the close one fixes 1.
TEST(TaggingAccuracy, PairedBootstrapAgainstTheFirstSystem) {
  TaggedText ref, base, better, close;
  for (auto* t : {&ref, &base, &better, &close}) t->origin = "x";
  ref.origin = "ref", base.origin = "base", better.origin = "better", close.origin = "close";
  for (int s = 0; s < 200; ++s) {
    const std::vector<std::string> forms = {"w" + std::to_string(s % 13), "v", "u"};
    const std::vector<std::string> gold = {"A", "B", "C"};
    std::vector<std::string> wrong = gold;
    if (s % 4 == 0) wrong[0] = "X";
    std::vector<std::string> fixed = wrong;
    if (s % 4 == 0 && s < 160) fixed[0] = "A";
    std::vector<std::string> nearly = wrong;
    if (s == 0) nearly[0] = "A";
    ref.forms.push_back(forms), ref.tags.push_back(gold);
    base.forms.push_back(forms), base.tags.push_back(wrong);
    better.forms.push_back(forms), better.tags.push_back(fixed);
    close.forms.push_back(forms), close.tags.push_back(nearly);
  }
  TaggingScoreSettings settings;
  settings.paired_bs = true;
  settings.paired_bs_n = 300;
  const auto scores = score_tagging(ref, {base, better, close}, settings);
  ASSERT_TRUE(scores.paired);
  const auto& baseline = scores.systems[0].paired.at(0);
  EXPECT_FALSE(baseline.p_value.has_value());
  EXPECT_NEAR(*baseline.mean, 100.0 * 550 / 600, 1.0);  // bootstrap mean near the score
  EXPECT_GT(*baseline.ci, 0.0);
  EXPECT_LT(*scores.systems[1].paired.at(0).p_value, 0.05);
  EXPECT_GT(*scores.systems[2].paired.at(0).p_value, 0.05);
  EXPECT_EQ(scores.seed, "12345");
  // One system cannot be compared.
  EXPECT_THROW(score_tagging(ref, {base}, settings), csan::Error);
}

TEST(TaggingAccuracy, SystemsMustTagTheReferenceText) {
  auto error_of = [](const TaggedText& system) {
    try {
      score_tagging(kReference, {system}, {});
    } catch (const csan::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  TaggedText shorter = kSystem;
  shorter.forms.pop_back(), shorter.tags.pop_back(), shorter.first_lines.pop_back();
  EXPECT_EQ(error_of(shorter), "sys.conllu: 1 sentences, but the reference ref.conllu has 2");
  TaggedText missing_word = kSystem;
  missing_word.forms[1].pop_back(), missing_word.tags[1].pop_back();
  EXPECT_EQ(error_of(missing_word), "sys.conllu:11: sentence 2 has 2 words, the reference's (ref.conllu:11) 3");
  TaggedText other = kSystem;
  other.forms[0][2] = "walks";
  EXPECT_EQ(error_of(other),
            "sys.conllu:1: word 3 of sentence 1 is 'walks', the reference's is 'runs' (not the same text)");
  EXPECT_THROW(score_tagging(kReference, {}, {}), csan::Error);
}

TEST(TaggingReport, JsonAndText) {
  TaggingScoreSettings settings;
  settings.classes = WordClasses::from_training(kTrain);
  settings.paired_bs = true;
  settings.paired_bs_n = 50;
  const auto scores = score_tagging(kReference, {kSystem, kReference}, settings);
  const auto json = nlohmann::json::parse(tagging_report_json(scores, 2));
  EXPECT_EQ(json["reference"], "ref.conllu");
  EXPECT_EQ(json["words"], 7);
  EXPECT_EQ(json["oov_words"], 2);
  EXPECT_EQ(json["oov_definition"], "form not in train.conllu");
  ASSERT_EQ(json["systems"].size(), 2u);
  const auto& sys = json["systems"][0];
  EXPECT_EQ(sys["name"], "sys.conllu");
  EXPECT_EQ(sys["baseline"], true);
  EXPECT_DOUBLE_EQ(sys["accuracy"]["score"].get<double>(), 71.43);
  EXPECT_EQ(sys["accuracy"]["correct"], 5);
  EXPECT_EQ(sys["ambiguous_accuracy"]["total"], 2);
  EXPECT_TRUE(sys["accuracy"].contains("mean"));
  EXPECT_FALSE(sys["accuracy"].contains("p_value"));
  EXPECT_TRUE(json["systems"][1]["oov_accuracy"].contains("p_value"));
  EXPECT_DOUBLE_EQ(sys["tag_recall"]["NOUN"]["score"].get<double>(), 50.0);

  const std::string text = tagging_report_text(scores, 2);
  EXPECT_NE(text.find("Reference ref.conllu (upos): 7 words; OOV (form not in train.conllu): 2; ambiguous"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("System      accuracy"), std::string::npos) << text;
  EXPECT_NE(text.find("sys.conllu  71.43"), std::string::npos) << text;
  EXPECT_NE(text.find("NOUN           2"), std::string::npos) << text;
}

}  // namespace
