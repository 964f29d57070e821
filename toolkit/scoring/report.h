// Signatures and single-system outputs exactly as sacreBLEU 2.6.0 prints them (spec §7).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "toolkit/scoring/metric.h"
#include "toolkit/scoring/resampling.h"

namespace csan::scoring {

// The sacreBLEU release whose outputs (and signatures) we reproduce.
inline constexpr const char* kSacrebleuVersion = "2.6.0";

// The fields every metric's signature shares, in sacreBLEU's order.
struct CommonSignature {
  std::string nrefs = "1";
  std::optional<std::string> bootstrap;      // bs:N
  std::optional<std::string> randomization;  // ar:N
  std::optional<std::string> seed;           // seed:S
};

// nrefs|bs|ar|seed|<metric fields>|version
std::vector<SignatureField> make_signature(const Metric& metric, const CommonSignature& common);
// "key:value|..." with the long or the --short keys.
std::string format_signature(const std::vector<SignatureField>& fields, bool short_form);

// One metric's score as sacreBLEU's Score object holds it.
struct ScoreReport {
  std::string name;
  double score = 0.0;
  std::optional<Confidence> confidence;  // -ci
  std::string verbose;                   // BLEU's "p1/p2/p3/p4 (BP = ...)"
};

// Score.format(width, score_only, signature, is_json): the text line, the bare score or
// the JSON object (indent 1, raw UTF-8; one key per signature field).
std::string format_score(const ScoreReport& report, int width, bool score_only, const std::string& signature,
                         bool json);

// print_single_results: all metrics' formatted results as printed on stdout (JSON list
// for several metrics; text lines aligned on their first '=').
std::string single_system_output(const std::vector<std::string>& results, bool json);

}  // namespace csan::scoring
