// csan-preprocess --task multilingual_translation: several language pairs into one data
// directory with ONE SentencePiece model (spm.model) and ONE joint dictionary holding
// every language's token (__en__, __de__, ...), written as dict.<lang>.txt for each
// language (the files are identical, as fairseq's multilingual tasks expect), and
// {split}.<src>-<tgt>.<lang>.{bin,idx} per pair. The raw text of pair SRC-TGT is
// PREFIX.SRC-TGT.SRC and PREFIX.SRC-TGT.TGT; the reverse direction may come from the same
// files (PREFIX.TGT-SRC.*), so en-de and de-en need one corpus.
#pragma once

#include <string>
#include <vector>

#include "toolkit/data/lang_pairs.h"
#include "toolkit/data/preprocess.h"

namespace csan::data {

struct MultilingualPreprocessOptions {
  std::vector<LangPair> pairs;
  // Of its fields, these apply: trainpref, validpref, testpref, destdir, workers,
  // spm_model, spm, srcdict (the joint dictionary), thresholdsrc, nwordssrc,
  // padding_factor, progress.
  PreprocessOptions base;
};

// Throws csan::Error naming the option or file (a missing file names the pair); the
// destination is then left as it was.
PreprocessSummary preprocess_multilingual(const MultilingualPreprocessOptions& options);

// The raw files of `pair` under `prefix`: PREFIX.SRC-TGT if its files exist, else
// PREFIX.TGT-SRC (the reverse direction of the same corpus). Throws csan::Error naming the
// missing file and the pair.
std::string pair_prefix(const std::string& prefix, const LangPair& pair);

}  // namespace csan::data
