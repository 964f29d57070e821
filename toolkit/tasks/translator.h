// Translation as a library call on raw text, for programs that keep models loaded: the
// Python package's csan.Translator and the server. The checkpoints are loaded once (an
// ensemble, in the precision asked for, with an optional lexical shortlist); each call
// encodes its lines with the checkpoint's SentencePiece model (or reads dictionary
// symbols), translates them through generation::BatchTranslator as csan-generate does
// (same batching, same hypotheses) and decodes the hypotheses.
//
// Thread safety: any number of threads may call translate() and score() at once. Callers
// whose options are the same are served together: whichever thread finds the models idle
// translates every waiting request with those options as one set of batches, and each
// caller gets its own sentences' results back (no thread of its own, no copy of the models).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "toolkit/generation/batch_translator.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/generation/loaded_ensemble.h"
#include "toolkit/generation/search_options.h"
#include "toolkit/generation/shortlist.h"
#include "toolkit/generation/text_codec.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::tasks {

struct TranslatorOptions {
  std::vector<std::string> paths;             // checkpoints; several form an ensemble
  std::string device = "cpu";                 // "cpu" or "cuda"
  generation::InferencePrecision precision;   // an inference-only checkpoint's own by default
  int64_t threads = 0;                        // LibTorch's CPU threads (process-wide; 0: leave as they are)
  std::string shortlist;                      // lexical shortlist file ("" : the whole vocabulary)
  // The pair a multilingual checkpoint translates (required for one; for another
  // checkpoint "" or its own languages).
  std::string source_lang, target_lang;
};

struct TranslateOptions {
  generation::SearchOptions search;
  generation::BatchLimits limits;
  bool operator==(const TranslateOptions& o) const;
};

struct TextHypothesis {
  std::string text;                      // detokenized
  std::vector<int64_t> tokens;           // target ids, ending with </s>
  double score = 0;                      // length-normalized (SearchOptions::lenpen)
  std::vector<float> positional_scores;  // log p of each token (natural log), </s> included
};

// A target sentence scored given its source (forced decoding).
struct ForcedScore {
  double log_probability = 0;            // sum of positional_scores
  std::vector<int64_t> tokens;           // the target's ids as encoded, ending with </s>
  std::vector<float> positional_scores;  // log p of each target token, </s> included
};

class Translator {
 public:
  // Throws csan::Error naming the file or option (a missing or corrupt checkpoint, an
  // unknown device, a precision the device cannot decode in, a bad shortlist, a language
  // pair that is not the model's).
  Translator(const TranslatorOptions& options, std::ostream& log);
  ~Translator();

  // Up to nbest hypotheses per line, best first (none for an empty line). Throws
  // csan::Error for bad options or a line that is not UTF-8 ("ORIGIN:LINE: ...").
  std::vector<std::vector<TextHypothesis>> translate(const std::vector<std::string>& lines,
                                                     const TranslateOptions& options,
                                                     const std::string& origin = "input");

  // log p(target | source) of each pair under the ensemble, token by token (the search's
  // probabilities: the models' mean, temperature 1). Throws csan::Error when the lists'
  // lengths differ or a target is longer than the models' positions.
  std::vector<ForcedScore> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                 const generation::BatchLimits& limits = {});

  // The number of source tokens `line` encodes to (its </s> included, cut to the models'
  // positions as translate() cuts it): what a server counts to fill batches by tokens.
  // Throws csan::Error for a line that is not UTF-8.
  int64_t source_tokens(const std::string& line) const;

  const std::string& source_language() const { return ensemble_.src_lang; }
  const std::string& target_language() const { return ensemble_.tgt_lang; }
  generation::InferencePrecision precision() const { return precision_; }
  std::string device() const;
  const generation::LoadedEnsemble& ensemble() const { return ensemble_; }

 private:
  struct Request;
  // Source lines get a multilingual model's source-side language token; targets (score())
  // are encoded as they are.
  std::vector<generation::SourceSentence> encode_sources(const std::vector<std::string>& lines,
                                                         const std::string& origin) const;
  std::vector<generation::SourceSentence> encode(const std::vector<std::string>& lines, const std::string& origin,
                                                 int64_t max_length, const generation::TextCodec& codec) const;
  void serve(std::unique_lock<std::mutex>& lock);

  generation::LoadedEnsemble ensemble_;
  generation::InferencePrecision precision_;
  std::unique_ptr<text::SentencePieceModel> sentencepiece_;
  std::unique_ptr<text::SentencePieceModel> target_sentencepiece_;  // where the target side has its own
  std::unique_ptr<generation::TextCodec> source_codec_, target_codec_;
  std::unique_ptr<generation::Shortlist> shortlist_;
  int64_t max_source_positions_ = 0, max_target_positions_ = 0;

  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<Request*> waiting_;
  bool busy_ = false;
};

}  // namespace csan::tasks
