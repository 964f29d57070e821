// Tagging accuracy as csan-score --task tagging reports it: accuracy over all words, over
// out-of-vocabulary words and over ambiguous words, recall per reference tag, and paired
// bootstrap resampling between systems (sentences resampled with sacreBLEU's generator,
// resampling.h). Word classes, as in Dufter et al. 2020 (the authors' evaluation):
//   OOV        a form not in the vocabulary when one is given (the model's word
//              dictionary: the paper's definition), else a form not in the training data;
//   ambiguous  not OOV and seen in the training data with two or more distinct tags.
// Torch-free and independent of the CoNLL-U reader: callers pass words and tags.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"
#include "toolkit/scoring/resampling.h"

namespace csan::scoring {

// The words and tags of one file, sentence by sentence.
struct TaggedText {
  std::string origin;                            // file name, for messages
  std::vector<std::vector<std::string>> forms;   // [sentence][word]
  std::vector<std::vector<std::string>> tags;    // [sentence][word]
  std::vector<long> first_lines;                 // 1-based line of each sentence (0: unknown)
};

// Which words count as OOV and ambiguous.
struct WordClasses {
  std::map<std::string, std::set<std::string>> training_tags;  // form -> tags seen in training
  std::optional<std::set<std::string>> vocabulary;             // OOV = not in it, when given
  std::string oov_source;                                      // "train.conllu" or "dict.words.txt", for reports

  bool oov(const std::string& form) const;
  bool ambiguous(const std::string& form) const;
  static WordClasses from_training(const TaggedText& train);
};

// Accuracy over the words `counted[sentence][word]` selects; one Metric of resampling.h
// (segments are sentences, their statistics [correct, total]).
class TaggingAccuracy : public Metric {
 public:
  TaggingAccuracy(std::string name, std::vector<std::vector<bool>> counted);
  std::string name() const override { return name_; }
  std::vector<SignatureField> signature_fields() const override { return {}; }
  // hyps[i] and refs[0][i]: sentence i's tags joined by tabs.
  std::vector<Stats> segment_stats(const std::vector<std::string>& hyps,
                                   const std::vector<std::vector<std::string>>& refs) const override;
  double score(const Stats& sum) const override;
  double score_float32(const std::vector<float>& sum) const override;
  bool integer_stats() const override { return true; }

 private:
  std::string name_;
  std::vector<std::vector<bool>> counted_;
};

struct Count {
  long correct = 0, total = 0;
  double percent() const { return total ? 100.0 * double(correct) / double(total) : 0.0; }
};

struct SystemScores {
  std::string name;
  // "accuracy", then "oov_accuracy" and "ambiguous_accuracy" when word classes are known.
  std::vector<std::pair<std::string, Count>> accuracies;
  std::map<std::string, Count> tag_recall;       // reference tag -> its words predicted right
  std::vector<PairedResult> paired;              // per accuracy, with --paired-bs
};

struct TaggingScores {
  std::string reference, tag_column, oov_source;
  long words = 0, oov_words = 0, ambiguous_words = 0;
  bool classes = false;  // OOV / ambiguous reported
  std::vector<SystemScores> systems;
  bool paired = false;
  int paired_bs_n = 0;
  std::string seed;  // "12345" or "none"
};

struct TaggingScoreSettings {
  std::string tag_column = "upos";
  std::optional<WordClasses> classes;
  bool paired_bs = false;
  int paired_bs_n = 1000;
  ResamplingSeed seed;
};

// Scores every system against the reference. Throws csan::Error naming the system's file
// (and the sentence's line) when its sentences or words differ from the reference's.
TaggingScores score_tagging(const TaggedText& reference, const std::vector<TaggedText>& systems,
                            const TaggingScoreSettings& settings);

}  // namespace csan::scoring
