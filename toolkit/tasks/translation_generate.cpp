#include "toolkit/tasks/translation_generate.h"

#include <unistd.h>

#include <boost/program_options.hpp>

#include "toolkit/core/allocator_tuning.h"
#include "toolkit/core/blas_core_hint.h"
#include "toolkit/core/error.h"
#include "toolkit/core/process_memory.h"
#include "toolkit/generation/inference_precision.h"
#include "toolkit/loading/inference_checkpoint.h"
#include "toolkit/loading/model_loader.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/nn/onednn_sgemm.h"
#include "toolkit/nn/precision.h"
#include "toolkit/nn/projection_kind.h"
#include "toolkit/tasks/recipe.h"
#include "toolkit/tasks/translation_generate_run.h"

namespace po = boost::program_options;

namespace csan::tasks {

std::unique_ptr<po::options_description> translation_generate_options(GenerateOptions& o) {
  auto section = std::make_unique<po::options_description>(
      "Translation checkpoints: csan-generate --path CKPT[:CKPT...] (--data DIR | --input FILE|-) [options]");
  section->add_options()("data", po::value<std::string>(&o.data_dir),
                         "binarized data directory (csan-preprocess output)")(
      "gen-subset", po::value<std::string>(&o.gen_subset)->default_value("test"), "split of --data to translate")(
      "input", po::value<std::string>(&o.input), "raw text file to translate, or - for stdin (line by line)")(
      "source-lang,s", po::value<std::string>(&o.source_lang), "source language (default: the checkpoint's)")(
      "target-lang,t", po::value<std::string>(&o.target_lang), "target language (default: the checkpoint's)")(
      "batch-size", po::value<int64_t>(&o.batch_size)->default_value(64), "max sentences per batch (0: no limit)")(
      "max-tokens", po::value<int64_t>(&o.max_tokens)->default_value(0), "max source tokens per batch (0: no limit)")(
      "parallel-batches", po::value<int64_t>(&o.parallel_batches)->default_value(0),
      "batches translated at once, each on its share of the threads (0: one per thread; 1: one batch on all)")(
      "buffer-size", po::value<int64_t>(&o.buffer_size)->default_value(0),
      "raw input lines read before translating (0: 1 at a terminal, else 16 batches or 2 per thread)")(
      "output-format", po::value<std::string>(&o.output_format)->default_value("fairseq"),
      "fairseq (S-/T-/H-/D-/P- lines and a summary) or plain (one hypothesis per line)")(
      "results-path", po::value<std::string>(&o.results_path), "write DIR/generate-SUBSET.txt instead of stdout")(
      // Parsed here, once, into the enum everything after the command line uses.
      "precision", po::value<std::string>()->default_value("fp32")->notifier([&o](const std::string& name) {
        o.precision.precision = nn::parse_precision(name, "--precision");
      }),
      "fp32, bf16 (bf16 products, fp32 scores), int8 (CPU: dynamically quantized projections) or fp16 (GPU)")(
      "cpu", po::bool_switch(&o.cpu), "decode on the CPU even when a CUDA GPU is available")(
      "use-ema", po::bool_switch(&o.use_ema), "decode with the checkpoints' EMA weights (csan-train --store-ema)")(
      "quantize-skip", po::value<std::vector<std::string>>(&o.precision.quantize_skip)->multitoken(),
      "layers kept fp32 under bf16/int8 (parameter-name prefixes, e.g. decoder.output_projection)")(
      "shortlist", po::value<std::string>(&o.shortlist),
      "lexical shortlist file (build-shortlist): the output layer scores only the batch's candidates")(
      "print-alignment", po::value<std::string>(&o.print_alignment)->implicit_value("hard"),
      "an A- line per hypothesis: hard (source-target index pairs, the argmax of the attention) or soft "
      "(the attention probabilities); fairseq's format")(
      "alignment-layer", po::value<int64_t>(&o.search.alignment_layer)->default_value(-1),
      "decoder layer whose attention over the source aligns, averaged over its heads (0-based; -1: the last, "
      "fairseq's default; -2: the second to last)")(
      "alignment-words", po::bool_switch(&o.alignment_words),
      "align the whitespace words of the input and output instead of their subword tokens")(
      "constraints", po::value<std::string>(&o.constraints)->implicit_value("ordered"),
      "lexically constrained decoding (--input only): each input line is followed by tab-separated phrases that "
      "every output must contain, in the given order (ordered) or in any order (unordered)");
  auto& s = o.search;
  po::options_description search("Search (translation checkpoints)");
  search.add_options()("beam", po::value<int64_t>(&s.beam)->default_value(5), "beam size")(
      "nbest", po::value<int64_t>(&s.nbest)->default_value(1), "hypotheses to print per sentence")(
      "lenpen", po::value<double>(&s.lenpen)->default_value(1.0), "score = log p / length^lenpen")(
      "max-len-a", po::value<double>(&s.max_len_a)->default_value(0.0), "max length = a * source length + b")(
      "max-len-b", po::value<int64_t>(&s.max_len_b)->default_value(200), "see --max-len-a")(
      "min-len", po::value<int64_t>(&s.min_len)->default_value(1), "minimum output length (tokens before </s>)")(
      "unkpen", po::value<double>(&s.unkpen)->default_value(0.0), "penalty subtracted from <unk>'s log-probability")(
      "allow-bos", po::bool_switch(&s.allow_bos),
      "let the search generate <s>, as fairseq's SequenceGenerator does (models imported from fairseq)")(
      "no-repeat-ngram-size", po::value<int64_t>(&s.no_repeat_ngram_size)->default_value(0),
      "never repeat an n-gram of this size (0: off)")("prefix-size",
                                                      po::value<int64_t>(&s.prefix_size)->default_value(0),
                                                      "force the first N reference tokens (--data only)")(
      "sampling", po::bool_switch(&s.sampling), "sample instead of beam search (--beam samples per sentence)")(
      "sampling-topk", po::value<int64_t>(&s.sampling_topk)->default_value(-1), "sample among the k best (-1: all)")(
      "sampling-topp", po::value<double>(&s.sampling_topp)->default_value(-1.0),
      "sample from the smallest set with probability >= p (-1: all)")(
      "temperature", po::value<double>(&s.temperature)->default_value(1.0), "divide logits by this")(
      "seed", po::value<uint64_t>(&s.seed)->default_value(1), "sampling seed")(
      "transformers-beam", po::bool_switch(&s.transformers_rules),
      "beam search with transformers' generate() rules (models imported from Hugging Face: csan-import "
      "--marian): the k best finished hypotheses, early_stopping=False, a forced </s> scores 0");
  section->add(search);
  return section;
}

DecodingModels load_for_decoding(const std::vector<std::string>& paths, const generation::InferencePrecision& requested,
                                 bool cpu, checkpoint::CheckpointReader& first, std::ostream& log, bool use_ema) {
  // An inference-only checkpoint decodes as it was written: in its precision, with the
  // layers its --quantize-skip kept fp32 (--precision and --quantize-skip may repeat them;
  // the defaults follow them).
  DecodingModels loaded;
  loaded.precision = requested;
  if (const auto stored = loading::inference_precision_of(first)) {
    const std::string name = nn::precision_name(stored->precision);
    if (requested.precision != nn::Precision::fp32 && requested.precision != stored->precision)
      throw Error(std::string("--precision ") + nn::precision_name(requested.precision) + ": " + first.path() +
                  " is an inference-only " + name + " checkpoint (leave --precision out or give " + name + ")");
    if (!requested.quantize_skip.empty() && requested.quantize_skip != stored->quantize_skip) {
      std::string written;
      for (const auto& layer : stored->quantize_skip) written += " " + layer;
      throw Error("--quantize-skip: " + first.path() + " is an inference-only checkpoint written with " +
                  (written.empty() ? std::string("no --quantize-skip") : "--quantize-skip" + written) +
                  " (leave --quantize-skip out)");
    }
    loaded.precision = *stored;
  }
  // Products of a precision that exists only on the CPU (int8): a GPU machine decodes
  // there by itself.
  const nn::Precision precision = loaded.precision.precision;
  const bool cpu_only = !nn::projection_kind(precision).on_cuda;
  const torch::Device device = nn::compute_device(cpu || cpu_only);
  if (cpu_only && !cpu && torch::cuda::is_available())
    log << nn::precision_name(precision) << ": decoding on the CPU (" << nn::precision_name(precision)
        << " products are CPU-only)\n";
  if (!device.is_cpu()) log << "decoding on " << nn::describe_device(device) << "\n";
  // A hint is for a person at a terminal: logs and pipelines that read stderr stay as they were.
  // Where oneDNN's sgemm serves the fp32 products (nn/onednn_sgemm.h), OpenBLAS's core does not matter.
  if (device.is_cpu() && isatty(STDERR_FILENO) && !nn::onednn_sgemm_available())
    if (const std::string hint = core::openblas_core_hint(); !hint.empty()) log << hint << "\n";
  loaded.ensemble = load_translation_ensemble(paths, &first, device, use_ema);
  generation::convert_ensemble(loaded.ensemble.models, loaded.precision, log);
  // Loading and conversion left freed blocks (the archive's copies, the fp32 forms of
  // converted weights) that decoding's buffers do not fit; csan-generate never trims.
  core::release_free_heap_pages();
  // Start-up and loading ran code that decoding does not (LibTorch's operator registrations
  // alone touch 36 MiB of libtorch_cpu): out of the resident set before its peak.
  core::release_clean_library_pages();
  return loaded;
}

void generate_translations(const GenerateOptions& options, checkpoint::CheckpointReader& first, std::ostream& out,
                           std::ostream& log) {
  validate_generate_options(options);
  const DecodingModels loaded =
      load_for_decoding(options.paths, options.precision, options.cpu, first, log, options.use_ema);
  GenerateOptions effective = options;
  effective.precision = loaded.precision;
  translate(effective, loaded.ensemble, out, log);
}

generation::LoadedEnsemble load_translation_ensemble(const std::vector<std::string>& paths,
                                                     checkpoint::CheckpointReader* first, const torch::Device& device,
                                                     bool use_ema) {
  if (paths.empty()) throw Error("--path: no checkpoint given");
  generation::LoadedEnsemble ensemble;
  checkpoint::CheckpointMeta first_meta;
  for (size_t i = 0; i < paths.size(); ++i) {
    loading::LoadedModel loaded =
        i > 0   ? loading::load_ensemble_member(paths[i], first_meta, paths[0], describe_model, device, use_ema)
        : first ? loading::load_model(*first, describe_model, device, use_ema)
                : loading::load_model(paths[0], describe_model, device, use_ema);
    if (i == 0) {
      first_meta = loaded.meta;
      // A multilingual model is a translation model over one joint dictionary.
      if (first_meta.task != "translation" && first_meta.task != "multilingual_translation")
        throw Error(paths[0] + ": a " + first_meta.task + " checkpoint, not a translation one");
      ensemble.src_lang = first_meta.get("src_lang");
      ensemble.tgt_lang = first_meta.get("tgt_lang");
      ensemble.src_dict = text::Dictionary::parse(first_meta.get("src_dict"), paths[0] + " (source dictionary)");
      ensemble.tgt_dict = text::Dictionary::parse(first_meta.get("tgt_dict"), paths[0] + " (target dictionary)");
      ensemble.spm_model = first_meta.get("spm_model");
      ensemble.tgt_spm_model = first_meta.get("tgt_spm_model");
      ensemble.detokenizer = first_meta.get("detokenizer");
    } else {
      if (loaded.meta.get("src_dict") != first_meta.get("src_dict") ||
          loaded.meta.get("tgt_dict") != first_meta.get("tgt_dict"))
        throw Error(paths[i] + ": its dictionaries differ from those of " + paths[0] +
                    " (an ensemble needs one vocabulary)");
    }
    auto model = std::dynamic_pointer_cast<models::EncoderDecoderModel>(loaded.model);
    if (!model) throw Error(paths[i] + ": its model is not an encoder-decoder model");
    ensemble.models.push_back(std::move(model));
  }
  return ensemble;
}

}  // namespace csan::tasks
