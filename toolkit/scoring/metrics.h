// Factories for the three metrics, configured like sacreBLEU's command line.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "toolkit/scoring/metric.h"

namespace csan::scoring {

struct BleuOptions {
  std::string tokenize = "13a";  // 13a, intl, zh, char, none, spm, flores101, flores200
  std::string spm_model;         // SentencePiece model file for spm/flores tokenizers
  bool lowercase = false;
  std::string smooth_method = "exp";  // none, floor, add-k, exp
  std::optional<double> smooth_value; // default per method (floor 0.1, add-k 1)
  bool effective_order = false;       // forced on for sentence-level scoring
  bool force = false;
};

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2 = chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;
  bool eps_smoothing = false;
};

struct TerOptions {
  bool case_sensitive = false;
  bool normalized = false;
  bool no_punct = false;
  bool asian_support = false;
};

// Throw csan::Error for invalid options (unknown tokenizer or smoothing method...).
std::unique_ptr<Metric> make_bleu(const BleuOptions& options);
std::unique_ptr<Metric> make_chrf(const ChrfOptions& options);
std::unique_ptr<Metric> make_ter(const TerOptions& options);

}  // namespace csan::scoring
