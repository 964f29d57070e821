// Multi-system outputs (spec §10): the JSON list, tabulate's fancy_grid and
// latex_booktabs tables, the paired-test explanation and the signature block.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "toolkit/scoring/resampling.h"

namespace csan::scoring {

enum class PairedTestKind { none, bootstrap, approximate_randomization };

struct MultiSystemReport {
  std::vector<std::string> system_names;  // the baseline's already prefixed "Baseline: "
  std::vector<std::string> metric_names;  // BLEU, chrF2, TER (sorted metric order)
  std::vector<std::string> signatures;    // one per metric, formatted
  std::vector<std::vector<PairedResult>> results;  // [system][metric]
  PairedTestKind test = PairedTestKind::none;
  long long n_samples = 0;  // resamples or trials, as given on the command line
};

// The whole stdout of a multi-system run for format "json", "text" or "latex".
std::string multi_system_output(const MultiSystemReport& report, const std::string& format, int width);

// tabulate(rows, headers, tablefmt) for the two formats sacreBLEU uses: column 0
// right-aligned, the others centred; cells may hold several lines (fancy_grid only).
std::string tabulate(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                     const std::string& tablefmt, int float_width);

}  // namespace csan::scoring
