// bench-generate: translation speed of csan-generate's library path (sentences/s and
// target tokens/s; model loading excluded), by default beam 5, 64 sentences per batch,
// fairseq-generate's length limit (max_len_a 0, max_len_b 200).
//   bench-generate --path CKPT --data DIR [--gen-subset test --beam 5 --batch-size 64 --repeats 3]
//                  [--profile trace.json]   (summed by op: tools/bench/trace-summary trace.json)
//
// The setup (small config on Multi30k test2016, 1,000 sentences), with a model
// TRAINED briefly: random weights rarely emit </s>, so every sentence would run to the
// length limit and the figure would say nothing about real decoding.
//   D=/work/shared/data/multi30k
//   csan-preprocess -s en -t de --trainpref $D/train --validpref $D/val --testpref $D/test2016
//       --joined-dictionary --spm-vocab-size 8000 --destdir /tmp/m30k --workers 1
//   OMP_NUM_THREADS=2 csan-train recipes/bench-small.yaml --data /tmp/m30k --source-lang en
//       --target-lang de --save-dir /tmp/m30k-ckpt --max-update 250 --lr 1e-3
//       --set lr_scheduler.warmup_updates=100 --set optimization.clip_norm=1.0
//   OMP_NUM_THREADS=2 bench-generate --path /tmp/m30k-ckpt/checkpoint_last.pt --data /tmp/m30k --repeats 3
// Compare two builds (before/after) by running their bench-generate alternately in one
// command and quoting the ratio.
// Precisions and the lexical shortlist (issue 20) are compared in one run, taking turns
// in every repeat; each line gives the speed ratio to the first precision and the share
// of sentences translated exactly as it does:
//   build/tools/build-shortlist --data /tmp/m30k -s en -t de --output /tmp/m30k.shortlist
//   OMP_NUM_THREADS=2 bench-generate --path CKPT --data /tmp/m30k --precision fp32,bf16,int8
//       --shortlist /tmp/m30k.shortlist --repeats 2
// The eager PyTorch yardstick runs the same checkpoint: `--dump-weights W` writes
// its parameters for tools/bench/pytorch-reference-generate.py (usage in its header).
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/profiler_legacy.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "comma_list.h"
#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/models/transformer.h"
#include "toolkit/nn/compute_threads.h"
#include "toolkit/tasks/translation_generate.h"
#include "toolkit/tasks/translation_generate_run.h"

namespace po = boost::program_options;

namespace {

// The first checkpoint's model as text header + raw data, for the eager reference:
//   csan-weights 1
//   option KEY VALUE        (what the weights cannot tell: heads, norm placement, ...)
//   NAME float32 DIM0 DIM1 ...
//   <blank line>
//   little-endian float32 data of every parameter, in header order
// Only plain Transformers (full-scope attention): the reference implements nothing else.
void dump_weights(const std::string& checkpoint, const std::string& file) {
  auto ensemble = csan::tasks::load_translation_ensemble({checkpoint});
  auto* model = dynamic_cast<csan::models::TransformerModel*>(ensemble.models[0].get());
  if (!model) throw csan::Error(checkpoint + ": --dump-weights supports Transformer models only");
  model->for_each_attention([&](const csan::nn::AttentionSite& site, csan::nn::MultiheadAttention& attention) {
    if (!attention->chain().empty())
      throw csan::Error(checkpoint + ": --dump-weights supports full-scope attention only (" + site.describe() +
                        " has " + attention->chain().names() + ")");
  });
  const auto& o = model->options();
  std::ostringstream header;
  header << "csan-weights 1\n";
  header << "option heads " << o.layer.heads << "\n"
         << "option encoder_layers " << o.encoder_layers << "\n"
         << "option decoder_layers " << o.decoder_layers << "\n"
         << "option normalize_before " << o.layer.normalize_before << "\n"
         << "option activation " << o.layer.activation << "\n"
         << "option learned_pos " << o.learned_pos << "\n"
         << "option no_scale_embedding " << o.no_scale_embedding << "\n"
         << "option share_all_embeddings " << o.share_all_embeddings << "\n"
         << "option share_decoder_input_output_embed " << o.share_decoder_input_output_embed << "\n"
         << "option max_source_positions " << o.max_source_positions << "\n"
         << "option max_target_positions " << o.max_target_positions << "\n"
         << "option pad " << ensemble.tgt_dict.pad() << "\n"
         << "option eos " << ensemble.tgt_dict.eos() << "\n";
  std::string data;
  for (const auto& item : model->named_parameters(/*recurse=*/true)) {
    const torch::Tensor value = item.value().detach().to(torch::kCPU, torch::kFloat).contiguous();
    header << item.key() << " float32";
    for (int64_t size : value.sizes()) header << ' ' << size;
    header << '\n';
    data.append(static_cast<const char*>(value.data_ptr()), static_cast<size_t>(value.numel()) * sizeof(float));
  }
  header << '\n';
  csan::write_file_atomically(file, header.str() + data);
}

std::vector<std::string> precision_list(const std::string& joined) {
  std::vector<std::string> items = csan::bench::split_list(joined);
  if (items.empty()) throw csan::Error("--precision: no precision given");
  return items;
}

// The fraction of lines of `a` equal to the same line of `b` (plain output: one
// translation per line).
double same_lines(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  std::string la, lb;
  int64_t lines = 0, same = 0;
  while (std::getline(sa, la) && std::getline(sb, lb)) {
    ++lines;
    same += la == lb;
  }
  return lines ? double(same) / double(lines) : 1.0;
}

int bench_main(int argc, char** argv) {
  csan::tasks::GenerateOptions o;
  std::string path;
  int64_t repeats = 1;
  std::string profile, dump, precisions;
  po::options_description options("bench-generate --path CKPT --data DIR [options]");
  options.add_options()("help,h", "show this help")("path", po::value<std::string>(&path), "checkpoint(s)")(
      "data", po::value<std::string>(&o.data_dir), "binarized data directory")(
      "gen-subset", po::value<std::string>(&o.gen_subset)->default_value("test"), "split to translate")(
      "source-lang", po::value<std::string>(&o.source_lang), "source language (default: the checkpoint's)")(
      "target-lang", po::value<std::string>(&o.target_lang), "target language (default: the checkpoint's)")(
      "beam", po::value<int64_t>(&o.search.beam)->default_value(5), "beam size")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "sentences per batch")(
      "max-len-a", po::value<double>(&o.search.max_len_a)->default_value(0.0), "length limit a * source + b")(
      "max-len-b", po::value<int64_t>(&o.search.max_len_b)->default_value(200), "length limit a * source + b")(
      "parallel-batches", po::value<int64_t>(&o.parallel_batches)->default_value(0),
      "batches translated at once (0: one per thread; 1: one batch on all threads)")(
      "repeats", po::value<int64_t>(&repeats)->default_value(1), "timed runs (the best is reported)")(
      "precision", po::value<std::string>(&precisions)->default_value("fp32"),
      "comma-separated precisions (fp32, bf16, int8), timed alternately in one run, ratios to the first")(
      "shortlist", po::value<std::string>(&o.shortlist),
      "lexical shortlist (build-shortlist): also time each precision with it")(
      "profile", po::value<std::string>(&profile), "then translate once more into this Chrome trace")(
      "dump-weights", po::value<std::string>(&dump),
      "write the model's parameters to this file for pytorch-reference-generate.py, then exit");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw csan::Error(std::string(e.what()) + " (see bench-generate --help)");
  }
  if (!dump.empty() && !path.empty()) {
    dump_weights(csan::generation::split_paths(path).at(0), dump);
    return 0;
  }
  if (vm.count("help") || path.empty() || o.data_dir.empty()) {
    std::cout << options;
    return vm.count("help") ? 0 : 1;
  }
  if (repeats < 1) throw csan::Error("--repeats: must be at least 1");
  csan::core::keep_large_allocations_mapped();  // as csan-generate
  csan::nn::use_compute_threads(0);             // as csan-generate: OMP_NUM_THREADS, else every usable CPU
  o.paths = csan::generation::split_paths(path);
  o.output_format = "plain";
  // One loaded (and converted) ensemble per precision, not timed; with --shortlist each
  // precision runs without and with it. The setups take turns in every repeat, so load
  // from other processes hits them alike.
  struct Setup {
    std::string name;
    csan::tasks::GenerateOptions options;
    std::shared_ptr<csan::generation::LoadedEnsemble> ensemble;
    double best = 0;
    csan::tasks::GenerateSummary summary;
    std::string output;
  };
  std::vector<Setup> setups;
  for (const auto& precision : precision_list(precisions)) {
    auto ensemble = std::make_shared<csan::generation::LoadedEnsemble>(csan::tasks::load_translation_ensemble(o.paths));
    auto options_for = o;
    options_for.precision.precision = csan::nn::parse_precision(precision, "--precision");
    csan::generation::convert_ensemble(ensemble->models, options_for.precision, std::cerr);
    for (bool with_shortlist : {false, true}) {
      if (with_shortlist && o.shortlist.empty()) continue;
      Setup setup{precision + (with_shortlist ? "+shortlist" : ""), options_for, ensemble, 0, {}, {}};
      if (!with_shortlist) setup.options.shortlist.clear();
      setups.push_back(std::move(setup));
    }
  }
  for (int64_t r = 0; r < repeats; ++r)
    for (auto& setup : setups) {
      std::ostringstream out, log;
      setup.summary = csan::tasks::translate(setup.options, *setup.ensemble, out, log);
      if (r == 0 || setup.summary.seconds < setup.best) setup.best = setup.summary.seconds;
      setup.output = out.str();
    }
  if (!profile.empty()) {
    std::ostringstream out, log;
    torch::autograd::profiler::RecordProfile recording(profile);
    csan::tasks::translate(setups.back().options, *setups.back().ensemble, out, log);
  }
  const auto& first = setups.front();
  std::printf("bench-generate: %lld sentences, beam %lld, batch %lld, max_len %g*src+%lld, %d threads\n",
              static_cast<long long>(first.summary.sentences), static_cast<long long>(o.search.beam),
              static_cast<long long>(o.batch_size), o.search.max_len_a, static_cast<long long>(o.search.max_len_b),
              at::get_num_threads());
  for (const auto& setup : setups) {
    if (setups.size() > 1)
      std::printf("  %-16s %.2fx %s, %.1f%% of sentences as %s\n", setup.name.c_str(), first.best / setup.best,
                  first.name.c_str(), 100.0 * same_lines(setup.output, first.output), first.name.c_str());
    const double best = setup.best;
    std::printf("  %.2f s  %.1f sentences/s  %.1f target tokens/s (%lld tokens)\n", best,
                double(setup.summary.sentences) / best, double(setup.summary.tokens) / best,
                static_cast<long long>(setup.summary.tokens));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return csan::run_main("bench-generate", bench_main, argc, argv); }
