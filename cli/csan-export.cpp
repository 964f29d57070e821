// csan-export: writes a csan Transformer in another toolkit's format. Option parsing only;
// the work is in toolkit/foreign/.
//   csan-export --path checkpoint_best.pt --to fairseq --out DIR [--force]
//   csan-export --path model.pt --to marian --out DIR [--force]
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/foreign/fairseq_export.h"
#include "toolkit/foreign/marian_export.h"

namespace po = boost::program_options;

namespace {

int export_main(int argc, char** argv) {
  std::string path, to, out;
  po::options_description options("csan-export --path CHECKPOINT --to fairseq|marian --out DIR [--force]");
  options.add_options()("help,h", "show this help")("path", po::value(&path),
                                                    "the csan checkpoint (a Transformer trained or imported by csan; "
                                                    "float32: not one convert-checkpoint made int8 or bf16)")(
      "to", po::value(&to),
      "fairseq: DIR/checkpoint.pt, dict.SRC.txt, dict.TGT.txt and the SentencePiece model(s), for fairseq-generate "
      "and CTranslate2's fairseq converter (--unsafe_deserialization); marian: a Hugging Face MarianMT folder for "
      "transformers and CTranslate2's transformers converter (models with Marian's settings: imported OPUS-MT ones)")(
      "out", po::value(&out), "the folder to write (created; must be empty or absent)")(
      "force", "replace --out and everything in it when it is not empty");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see csan-export --help)", csan::ErrorKind::bad_option);
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (path.empty())
    throw csan::Error("missing --path CHECKPOINT (see csan-export --help)", csan::ErrorKind::bad_option);
  if (out.empty()) throw csan::Error("missing --out DIR (see csan-export --help)", csan::ErrorKind::bad_option);
  const bool force = vm.count("force") > 0;
  if (to == "fairseq")
    csan::foreign::export_fairseq(path, out, force);
  else if (to == "marian")
    csan::foreign::export_marian(path, out, force);
  else
    throw csan::Error("--to: '" + to + "' is not fairseq or marian (see csan-export --help)",
                      csan::ErrorKind::bad_option);
  std::cerr << "csan-export: " << out << " (" << to << ") from " << path << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("csan-export", export_main, argc, argv); }
