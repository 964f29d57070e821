// Benchmark of csan-score's library path against sacreBLEU 2.6.0 (spec §13): corpus
// BLEU/chrF/TER throughput and paired significance tests, on seeded perturbations of
// multi30k train.de (or of generated text when the file is absent). Prints figures only.
//
//   bench-score [--text ../shared/data/multi30k/train.de] [--lines 100000] [--ter-lines 10000]
#include <sys/resource.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "toolkit/core/error.h"
#include "toolkit/core/text_file.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/resampling.h"

namespace po = boost::program_options;
using namespace csan::scoring;

namespace {

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start < line.size()) {
    const std::size_t space = line.find(' ', start);
    const std::size_t end = space == std::string::npos ? line.size() : space;
    if (end > start) words.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Reference lines: the text file's lines repeated, or random sentences from a small vocabulary.
std::vector<std::string> reference_lines(const std::string& path, std::size_t count) {
  std::vector<std::string> source;
  if (std::ifstream(path).good()) source = csan::read_lines(path);
  if (source.empty()) {
    std::mt19937 rng(7);
    const std::vector<std::string> vocabulary{"ein",    "Mann", "eine",   "Frau",   "Hund", "spielt", "auf",   "der",
                                              "Straße", "mit",  "einem",  "Ball",   ".",    ",",      "im",    "Park",
                                              "läuft",  "zwei", "Kinder", "sitzen", "vor",  "Haus",   "rotes", "Auto"};
    for (int i = 0; i < 5000; ++i) {
      std::vector<std::string> words(6 + rng() % 12);
      for (auto& w : words) w = vocabulary[rng() % vocabulary.size()];
      source.push_back(join(words));
    }
    std::printf("(no text file at '%s': using generated sentences)\n", path.c_str());
  }
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < count; ++i) lines.push_back(source[i % source.size()]);
  return lines;
}

// A seeded "system": drops, swaps and replaces words with the given rate.
std::vector<std::string> perturb(const std::vector<std::string>& refs, double rate, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::string> out;
  out.reserve(refs.size());
  for (const auto& ref : refs) {
    std::vector<std::string> words = split_words(ref);
    std::vector<std::string> result;
    for (std::size_t i = 0; i < words.size(); ++i) {
      const double u = uniform(rng);
      if (u < rate / 3) continue;                      // drop
      if (u < 2 * rate / 3 && i + 1 < words.size()) {  // swap with the next
        result.push_back(words[i + 1]);
        result.push_back(words[i]);
        ++i;
        continue;
      }
      if (u < rate)
        result.push_back(words[rng() % words.size()]);  // replace
      else
        result.push_back(words[i]);
    }
    out.push_back(join(result));
  }
  return out;
}

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// CPU time (all threads) of the last seconds() call: on a loaded machine the wall time
// says little, and sacreBLEU's reference figures are single-threaded user+sys times.
double last_cpu = 0.0;

double seconds(const std::function<void()>& body) {
  const double cpu_start = cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  body();
  last_cpu = cpu_seconds() - cpu_start;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double corpus_score(const Metric& metric, const std::vector<std::string>& hyps,
                    const std::vector<std::vector<std::string>>& refs) {
  return metric.score(sum_stats(metric.segment_stats(hyps, refs)));
}

// sacreBLEU's figure is the time for `sacrebleu_lines` lines; compare throughputs.
void report_throughput(const char* what, std::size_t lines, double secs, double sacrebleu_secs,
                       std::size_t sacrebleu_lines) {
  const double sacrebleu_rate = sacrebleu_lines / sacrebleu_secs;
  std::printf(
      "%-22s %7zu lines  wall %7.3f s %9.0f lines/s  cpu %7.3f s %9.0f lines/s   sacreBLEU %7.0f lines/s"
      " -> %5.1fx wall %5.1fx cpu\n",
      what, lines, secs, lines / secs, last_cpu, lines / last_cpu, sacrebleu_rate, lines / secs / sacrebleu_rate,
      lines / last_cpu / sacrebleu_rate);
}

// Wall time of a whole paired test (statistics extraction + resampling), and of the
// resampling alone.
struct PairedTiming {
  double total = 0;
  double resampling = 0;
  double cpu = 0;
};

PairedTiming paired_seconds(const std::vector<const Metric*>& metrics,
                            const std::vector<std::vector<std::string>>& systems,
                            const std::vector<std::vector<std::string>>& refs, bool bootstrap, std::size_t n) {
  PairedTiming timing;
  std::vector<std::vector<std::vector<Stats>>> stats(systems.size());
  const double extraction = seconds([&] {
    for (std::size_t s = 0; s < systems.size(); ++s)
      for (const Metric* metric : metrics) stats[s].push_back(metric->segment_stats(systems[s], refs));
  });
  timing.cpu = last_cpu;
  timing.resampling = seconds([&] {
    const auto results = bootstrap ? paired_bootstrap(metrics, stats, n, ResamplingSeed{})
                                   : paired_approximate_randomization(metrics, stats, n, ResamplingSeed{});
    if (results.size() != systems.size()) throw csan::Error("paired test returned the wrong number of rows");
  });
  timing.total = extraction + timing.resampling;
  timing.cpu += last_cpu;
  return timing;
}

void report_paired(const char* what, const PairedTiming& timing, double sacrebleu_secs) {
  std::printf("%-32s wall %7.3f s (resampling %.3f s)  cpu %7.3f s   sacreBLEU %5.2f s -> %5.1fx wall %5.1fx cpu\n",
              what, timing.total, timing.resampling, timing.cpu, sacrebleu_secs, sacrebleu_secs / timing.total,
              sacrebleu_secs / timing.cpu);
}

int run(int argc, char** argv) {
  std::string text = "../shared/data/multi30k/train.de";
  std::size_t n_lines = 100000, ter_lines = 10000, paired_lines = 3000;
  po::options_description options("bench-score");
  options.add_options()("help", "show options")("text", po::value(&text)->default_value(text),
                                                "reference text (one sentence per line)")(
      "lines", po::value(&n_lines)->default_value(n_lines), "lines for corpus BLEU/chrF")(
      "ter-lines", po::value(&ter_lines)->default_value(ter_lines), "lines for corpus TER")(
      "paired-lines", po::value(&paired_lines)->default_value(paired_lines), "lines per system in paired tests");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, options), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::printf("%s\n", "bench-score [--text FILE] [--lines N] [--ter-lines N] [--paired-lines N]");
    return 0;
  }

  const std::vector<std::string> refs = reference_lines(text, n_lines);
  const std::vector<std::string> hyps = perturb(refs, 0.15, 1);
  const std::vector<std::vector<std::string>> ref_streams{refs};
  const auto bleu = make_bleu({});
  const auto chrf = make_chrf({});
  const auto ter = make_ter({});
  double score = 0;
  std::printf("threads: %u\n", std::thread::hardware_concurrency());

  // sacreBLEU 2.6.0 wall times from spec §13 (mid-points of the recorded ranges).
  double t = seconds([&] { score = corpus_score(*bleu, hyps, ref_streams); });
  report_throughput("(a) corpus BLEU", refs.size(), t, 8.15, 100000);
  t = seconds([&] { score += corpus_score(*chrf, hyps, ref_streams); });
  report_throughput("(b) corpus chrF", refs.size(), t, 23.5, 100000);
  const std::vector<std::string> ter_refs(refs.begin(), refs.begin() + std::min(ter_lines, refs.size()));
  const std::vector<std::string> ter_hyps(hyps.begin(), hyps.begin() + ter_refs.size());
  t = seconds([&] { score += corpus_score(*ter, ter_hyps, {ter_refs}); });
  report_throughput("(c) corpus TER", ter_refs.size(), t, 1.75, 10000);
  t = seconds([&] { score += corpus_score(*ter, hyps, ref_streams); });
  report_throughput("(c') corpus TER", refs.size(), t, 24.8, 100000);

  const std::vector<std::string> paired_refs(refs.begin(), refs.begin() + std::min(paired_lines, refs.size()));
  std::vector<std::vector<std::string>> systems;
  for (unsigned s = 0; s < 3; ++s) systems.push_back(perturb(paired_refs, 0.1 + 0.1 * s, 10 + s));
  const std::vector<std::vector<std::string>> paired_streams{paired_refs};
  report_paired("(d) paired-bs 3x3000x1000 BLEU", paired_seconds({bleu.get()}, systems, paired_streams, true, 1000),
                1.35);
  report_paired("(d') paired-bs BLEU+chrF+TER",
                paired_seconds({bleu.get(), chrf.get(), ter.get()}, systems, paired_streams, true, 1000), 5.35);
  report_paired("(e) paired-ar 3x3000x10000 BLEU", paired_seconds({bleu.get()}, systems, paired_streams, false, 10000),
                3.45);
  std::printf("(checksum %.6f)\n", score);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-score", run, argc, argv); }
