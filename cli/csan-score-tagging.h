// csan-score --task tagging REF.conllu -i SYS.conllu [SYS2.conllu ...]: option parsing of
// the tagging path (the sacreBLEU path is csan-score.cpp's). The work is in
// toolkit/scoring/tagging_accuracy.h and tagging_report.h.
#pragma once

namespace csan::cli {

// Whether the command line asks for --task tagging (--task tagging or --task=tagging).
bool tagging_requested(int argc, char** argv);
// Runs the tagging path; returns the exit code (errors throw csan::Error, one line).
int score_tagging_main(int argc, char** argv);

}  // namespace csan::cli
