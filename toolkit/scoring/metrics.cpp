#include "toolkit/scoring/metrics.h"

#include "toolkit/scoring/bleu.h"
#include "toolkit/scoring/chrf.h"
#include "toolkit/scoring/ter.h"

namespace csan::scoring {

std::unique_ptr<Metric> make_bleu(const BleuOptions& options) { return std::make_unique<Bleu>(options); }
std::unique_ptr<Metric> make_chrf(const ChrfOptions& options) { return std::make_unique<Chrf>(options); }
std::unique_ptr<Metric> make_ter(const TerOptions& options) { return std::make_unique<Ter>(options); }

}  // namespace csan::scoring
