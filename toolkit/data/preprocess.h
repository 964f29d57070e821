// csan-preprocess as a library call: raw parallel (or monolingual) text in, a data
// directory out, with fairseq-preprocess's layout plus the SentencePiece model:
//   spm.model (joint) or spm.<lang>.model, dict.<lang>.txt,
//   {train,valid,valid1,...,test,...}.<src>-<tgt>.<lang>.{bin,idx}, preprocess.json.
// The directory is built under a temporary name and renamed into place at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "toolkit/data/length_filter.h"
#include "toolkit/text/sentencepiece.h"

namespace csan::data {

struct PreprocessOptions {
  std::string source_lang;
  std::string target_lang;  // empty with only_source
  bool only_source = false;
  // File prefixes: PREFIX.<lang> is read. Several train prefixes are concatenated;
  // several valid/test prefixes become valid, valid1, valid2, ... as in fairseq.
  std::vector<std::string> trainpref, validpref, testpref;
  std::string destdir;
  int workers = 1;

  // SentencePiece: reuse spm_model if set, else train (joint unless spm_per_language).
  std::string spm_model;
  bool spm_per_language = false;
  text::SentencePieceTrainOptions spm;

  // Dictionaries (fairseq semantics; thresholds/nwords of the source apply to a joined one).
  bool joined_dictionary = false;
  std::string srcdict, tgtdict;
  // The checkpoint the SentencePiece model and dictionaries above were taken from
  // (csan-preprocess --from-checkpoint; its files are temporaries): recorded in their stead.
  std::string from_checkpoint;
  int64_t thresholdsrc = 0, thresholdtgt = 0;
  int64_t nwordssrc = -1, nwordstgt = -1;
  int padding_factor = 8;

  // Cleaning of the training split, in SentencePiece tokens.
  LengthFilter filter;

  // Redraw a progress line (only has an effect when stderr is a terminal).
  bool progress = true;
};

struct SplitStats {
  std::string split;  // "train", "valid", "valid1", ...
  std::string lang;
  int64_t lines = 0;
  int64_t tokens = 0;   // including </s>
  int64_t unknown = 0;  // tokens replaced by <unk>
};

struct PreprocessSummary {
  std::vector<SplitStats> splits;
  int64_t train_lines_read = 0;
  FilterCounts filtered;
  std::vector<std::pair<std::string, int>> dictionary_sizes;  // lang -> size
  std::vector<std::string> removed_temporaries;               // leftovers of interrupted runs, removed first
  double seconds = 0;

  // The multi-line report printed at the end of csan-preprocess.
  std::string format() const;
};

// Runs the whole pipeline. Throws csan::Error (one line, naming the file, line or
// option) on bad input; the destination is then left as it was.
PreprocessSummary preprocess(const PreprocessOptions& options);

// Path prefix of a binarized split in `destdir`: DESTDIR/SPLIT.SRC-TGT.LANG, or
// DESTDIR/SPLIT.LANG for monolingual data without a target language.
std::string dataset_prefix(const std::string& destdir, const std::string& split, const std::string& source_lang,
                           const std::string& target_lang, const std::string& lang);

}  // namespace csan::data
