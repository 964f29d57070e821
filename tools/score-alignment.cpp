// score-alignment --generate OUT --truth FILE.align: precision and recall of the A- lines
// of a csan-generate output (--print-alignment hard) against true word alignments (the
// toy corpus's, csan-toy-corpus --alignments), beside a diagonal baseline. Only sentences
// whose hypothesis is the reference are compared: translate with the references forced
// (--data DIR --prefix-size 1024) to compare them all. See toolkit/scoring/alignment_score.h.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"
#include "toolkit/scoring/alignment_score.h"

namespace po = boost::program_options;

namespace {

int score_alignment_main(int argc, char** argv) {
  std::string generate_path, truth_path;
  po::options_description described("score-alignment: word alignment precision/recall against the truth\nOptions");
  described.add_options()("help,h", "show this help")("generate", po::value(&generate_path)->required(),
                                                      "csan-generate output (fairseq format, with A- lines)")(
      "truth", po::value(&truth_path)->required(), "true alignments, line i for sentence i (i-j pairs)");
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(described).run(), vm);
  if (vm.count("help")) {
    std::cout << described << "\n";
    return 0;
  }
  po::notify(vm);
  const auto generated = csan::scoring::parse_generate_output(csan::read_lines(generate_path), generate_path);
  const auto report =
      csan::scoring::score_alignments(generated, csan::read_lines(truth_path), generate_path, truth_path);
  for (const auto& line : report.lines) std::cout << line << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("score-alignment", score_alignment_main, argc, argv); }
