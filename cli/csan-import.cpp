// csan-import: writes a csan checkpoint (format 3) from another toolkit's model. Option
// parsing only; the work is in toolkit/foreign/.
//   csan-import --fairseq checkpoint.pt [--dict-dir DIR] [-s en -t de]
//               [--spm spm.model | --spm en.model --target-spm de.model] --output model.pt
//   csan-import --marian DIR [-s en -t de] --output model.pt
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/foreign/fairseq_import.h"
#include "toolkit/foreign/marian_import.h"

namespace po = boost::program_options;

namespace {

int import_main(int argc, char** argv) {
  csan::foreign::FairseqImportOptions fairseq;
  std::string marian_dir;
  std::string output;
  po::options_description options("csan-import (--fairseq CHECKPOINT.pt | --marian DIR) --output FILE [options]");
  options.add_options()("help,h", "show this help")(
      "fairseq", po::value(&fairseq.checkpoint),
      "a fairseq transformer-family checkpoint (transformer, transformer_iwslt_de_en, transformer_wmt_en_de, "
      "transformer_vaswani_wmt_en_de_big)")(
      "marian", po::value(&marian_dir),
      "a Hugging Face MarianMT (OPUS-MT) directory: config.json, model.safetensors or pytorch_model.bin, "
      "source.spm, target.spm, vocab.json")("dict-dir", po::value(&fairseq.dict_dir),
                                            "folder of dict.SRC.txt and dict.TGT.txt (default: the checkpoint's)")(
      "source-lang,s", po::value(&fairseq.source_lang),
      "source language (default: the checkpoint's task setting; Marian: tokenizer_config.json's)")(
      "target-lang,t", po::value(&fairseq.target_lang), "target language (default: as --source-lang)")(
      "spm", po::value(&fairseq.source_spm),
      "SentencePiece model of the source side (and of the target side "
      "unless --target-spm gives its own)")("target-spm", po::value(&fairseq.target_spm),
                                            "SentencePiece model of the target side")("output,o", po::value(&output),
                                                                                      "csan checkpoint to write");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-import --help)", csan::ErrorKind::bad_option);
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (fairseq.checkpoint.empty() && marian_dir.empty())
    throw csan::Error("missing --fairseq CHECKPOINT.pt or --marian DIR (see csan-import --help)",
                      csan::ErrorKind::bad_option);
  if (!fairseq.checkpoint.empty() && !marian_dir.empty())
    throw csan::Error("--fairseq and --marian: give one, not both", csan::ErrorKind::bad_option);
  if (output.empty()) throw csan::Error("missing --output FILE (see csan-import --help)");
  if (!marian_dir.empty()) {
    for (const char* fairseq_only : {"dict-dir", "spm", "target-spm"})
      if (vm.count(fairseq_only))
        throw csan::Error(std::string("--") + fairseq_only + ": a --fairseq option (--marian reads its directory)",
                          csan::ErrorKind::bad_option);
    csan::foreign::import_marian({marian_dir, fairseq.source_lang, fairseq.target_lang}, output);
  } else {
    csan::foreign::import_fairseq(fairseq, output);
  }
  std::cerr << "csan-import: " << output << " (" << std::filesystem::file_size(output) / 1024 << " KiB) from "
            << (marian_dir.empty() ? fairseq.checkpoint : marian_dir) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-import", import_main, argc, argv); }
