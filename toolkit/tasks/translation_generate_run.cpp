#include "toolkit/tasks/translation_generate_run.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "toolkit/core/atomic_file.h"
#include "toolkit/core/error.h"
#include "toolkit/core/progress.h"
#include "toolkit/data/language_pair_dataset.h"
#include "toolkit/generation/alignment.h"
#include "toolkit/generation/batch_translator.h"
#include "toolkit/generation/constraints.h"
#include "toolkit/generation/ensemble_decoder.h"
#include "toolkit/generation/output_format.h"
#include "toolkit/generation/shortlist.h"
#include "toolkit/generation/text_codec.h"
#include "toolkit/nn/compute_device.h"
#include "toolkit/scoring/metrics.h"
#include "toolkit/scoring/report_format.h"
#include "toolkit/scoring/resampling.h"
#include "toolkit/tasks/multilingual_steering.h"
#include "toolkit/text/sentencepiece.h"

namespace fs = std::filesystem;

namespace csan::tasks {

// The search machinery this run drives (toolkit/generation/).
using generation::EncodedLine;
using generation::format_result;
using generation::LoadedEnsemble;
using generation::OutputFormat;
using generation::parse_output_format;
using generation::SentenceResult;
using generation::Shortlist;
using generation::TextCodec;
using generation::truncate_source;

namespace {

struct Pending {
  int64_t id = 0;
  std::vector<int64_t> src;  // ends with </s>; only </s>: an empty input
  generation::Constraints constraints;
  std::optional<std::vector<int64_t>> ref;
  std::string source_text;
  std::optional<std::string> reference_text;
};

// Where the printed results go: stdout or an atomically written results file.
class ResultSink {
 public:
  ResultSink(std::ostream& out, const std::string& results_path, const std::string& subset) : out_(out) {
    if (results_path.empty()) return;
    fs::create_directories(results_path);
    file_ = std::make_unique<AtomicFile>(results_path + "/generate-" + subset + ".txt");
  }
  void write(const std::string& text) {
    if (file_) {
      file_->write(text);
    } else {
      out_ << text;
    }
  }
  void flush() {
    if (!file_) out_.flush();
  }
  void commit() {
    if (file_) file_->commit();
  }

 private:
  std::ostream& out_;
  std::unique_ptr<AtomicFile> file_;
};

// Translates chunks of pending sentences with the batch translator, keeping their texts
// for the printed results and the summary's counts.
class ChunkTranslator {
 public:
  // The codecs (for alignments over words) must outlive the translator.
  ChunkTranslator(const GenerateOptions& options, const LoadedEnsemble& ensemble, const TextCodec& source_codec,
                  const TextCodec& target_codec)
      : alignment_(generation::parse_alignment_format(options.print_alignment)),
        alignment_words_(options.alignment_words),
        source_codec_(source_codec),
        target_codec_(target_codec),
        shortlist_(options.shortlist.empty()
                       ? nullptr
                       : std::make_unique<Shortlist>(
                             Shortlist::load(options.shortlist, ensemble.src_dict, ensemble.tgt_dict))),
        translator_(ensemble,
                    with_attention(options.search, alignment_ != generation::AlignmentFormat::none,
                                   generation::parse_constraint_order(options.constraints)),
                    generation::BatchLimits{options.batch_size, options.max_tokens, options.parallel_batches},
                    shortlist_.get()) {}

  // Translates `chunk`; results in the chunk's order.
  std::vector<SentenceResult> translate(std::vector<Pending>& chunk, GenerateSummary& summary) {
    std::vector<generation::SourceSentence> sentences(chunk.size());
    for (size_t i = 0; i < chunk.size(); ++i) {
      sentences[i].src = std::move(chunk[i].src);
      if (chunk[i].ref) sentences[i].forced = std::move(*chunk[i].ref);
      sentences[i].constraints = std::move(chunk[i].constraints);
    }
    auto hypotheses = translator_.translate(sentences);
    std::vector<SentenceResult> results(chunk.size());
    for (size_t i = 0; i < chunk.size(); ++i) {
      results[i].id = chunk[i].id;
      results[i].source = std::move(chunk[i].source_text);
      results[i].reference = std::move(chunk[i].reference_text);
      results[i].hypotheses = std::move(hypotheses[i]);
      if (alignment_ != generation::AlignmentFormat::none) {
        results[i].with_alignments = true;
        for (const auto& hyp : results[i].hypotheses) results[i].alignments.push_back(align(sentences[i].src, hyp));
      }
      ++summary.sentences;
      if (!results[i].hypotheses.empty()) summary.tokens += static_cast<int64_t>(results[i].hypotheses[0].tokens.size());
    }
    summary.seconds = translator_.seconds();
    summary.most_parallel_batches = translator_.most_parallel_batches();
    return results;
  }

 private:
  static generation::SearchOptions with_attention(generation::SearchOptions search, bool attention,
                                                  generation::ConstraintOrder constraints) {
    search.attention = attention;
    search.constraints = constraints;
    return search;
  }
  std::string align(const std::vector<int64_t>& src, const generation::Hypothesis& hyp) const {
    const std::vector<int64_t> source_units = source_codec_.units(src, alignment_words_),
                               target_units = target_codec_.units(hyp.tokens, alignment_words_);
    if (alignment_ == generation::AlignmentFormat::hard)
      return generation::hard_alignment(hyp.attention, source_units, target_units);
    return generation::soft_alignment(hyp.attention, source_units, target_units, !alignment_words_);
  }

  generation::AlignmentFormat alignment_;  // --print-alignment
  bool alignment_words_;
  const TextCodec& source_codec_;
  const TextCodec& target_codec_;
  std::unique_ptr<Shortlist> shortlist_;  // --shortlist
  generation::BatchTranslator translator_;
};

void check_same_dictionary(const text::Dictionary& from_checkpoint, const std::string& data_path,
                           const std::string& checkpoint) {
  if (!(text::Dictionary::load(data_path) == from_checkpoint))
    throw Error(data_path + ": differs from the dictionary of " + checkpoint +
                " (the model was trained on other data)");
}

int64_t max_target_positions(const LoadedEnsemble& ensemble) {
  int64_t positions = std::numeric_limits<int64_t>::max();
  for (const auto& m : ensemble.models) positions = std::min(positions, m->max_target_positions());
  return positions;
}

// Constraints longer than the output may be are refused before anything is translated.
void check_room(const generation::Constraints& constraints, const generation::SearchOptions& search,
                int64_t src_length, int64_t max_target, const std::string& origin, int64_t line) {
  int64_t tokens = 0;
  for (const auto& c : constraints) tokens += static_cast<int64_t>(c.size());
  const int64_t room = generation::max_output_length(search, src_length, max_target);
  if (tokens > room)
    throw Error::at(origin, static_cast<long>(line),
                    "the constraints take " + std::to_string(tokens) + " tokens, more than the " +
                        std::to_string(room) + " this sentence's output may have (--max-len-a/--max-len-b)");
}

int64_t max_source_positions(const LoadedEnsemble& ensemble) {
  int64_t positions = std::numeric_limits<int64_t>::max();
  for (const auto& m : ensemble.models) positions = std::min(positions, m->max_source_positions());
  return positions;
}

std::string format_number(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// Corpus BLEU with csan-score's defaults (sacreBLEU's: 13a, exp smoothing) as csan-score
// prints it with -w 2: "BLEU = 12.34 45.6/20.1/9.8/4.5 (BP = ...)"; `bleu` gets the
// printed score.
std::string corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                        std::optional<double>& bleu) {
  const auto metric = scoring::make_bleu(scoring::BleuOptions{});
  const scoring::Stats sum = scoring::sum_stats(metric->segment_stats(hyps, {refs}));
  bleu = scoring::round_to_width(metric->score(sum), 2);
  return "BLEU = " + scoring::python_repr(*bleu) + " " + metric->verbose(sum);
}

// The checkpoint's SentencePiece model (`bytes`: the source's or the target's), when its data has one.
std::unique_ptr<text::SentencePieceModel> load_sentencepiece(const std::string& bytes, const GenerateOptions& options) {
  if (bytes.empty()) return nullptr;
  return std::make_unique<text::SentencePieceModel>(text::SentencePieceModel::from_bytes(bytes, options.paths[0]));
}

}  // namespace

int64_t raw_input_buffer(const GenerateOptions& options, bool from_terminal, int64_t threads) {
  if (options.buffer_size > 0) return options.buffer_size;
  // Each line as soon as it is entered, as fairseq-interactive does.
  if (from_terminal) return 1;
  // Several batches per buffer: each translates on its own thread (parallel batches). A
  // buffer of one batch ran on all threads at once, every small op of a decoding step an
  // OpenMP team whose barriers spin: beside a niced training on the same 2 cores, a
  // 500-line file took 95 s against 8 s in parallel batches (and 2 s on idle cores).
  const int64_t batch = options.batch_size > 0 ? options.batch_size : 64;
  return batch * std::max<int64_t>(16, 2 * threads);
}

void validate_generate_options(const GenerateOptions& options) {
  validate(options.search);
  validate(options.precision);
  if (options.data_dir.empty() == options.input.empty())
    throw Error("give either --data DIR (binarized) or --input FILE|- (raw text)");
  if (options.search.prefix_size > 0 && options.data_dir.empty())
    throw Error("--prefix-size: needs references (--data)");
  if (options.batch_size < 0 || options.max_tokens < 0) throw Error("--batch-size/--max-tokens: must not be negative");
  if (options.batch_size == 0 && options.max_tokens == 0)
    throw Error(
        "--batch-size 0 (no limit) needs --max-tokens > 0: with both unbounded a whole test set would be one batch");
  if (options.buffer_size < 0) throw Error("--buffer-size: must not be negative (0: the batch size)");
  if (options.parallel_batches < 0) throw Error("--parallel-batches: must not be negative");
  parse_output_format(options.output_format);
  const bool aligning = generation::parse_alignment_format(options.print_alignment) != generation::AlignmentFormat::none;
  if (aligning && parse_output_format(options.output_format) != OutputFormat::Fairseq)
    throw Error("--print-alignment: prints A- lines, which need --output-format fairseq");
  if (!aligning && options.alignment_words) throw Error("--alignment-words: needs --print-alignment");
  if (!aligning && options.search.alignment_layer != -1) throw Error("--alignment-layer: needs --print-alignment");
  const auto constraints = generation::parse_constraint_order(options.constraints);
  if (constraints != generation::ConstraintOrder::none && options.input.empty())
    throw Error("--constraints: needs --input (the constraints follow each input line, tab-separated)");
  if (constraints != generation::ConstraintOrder::none && options.search.sampling)
    throw Error("--constraints: needs beam search (not --sampling)");
  if (options.paths.empty()) throw Error("--path: no checkpoint given");
}

GenerateSummary translate(const GenerateOptions& options, const LoadedEnsemble& ensemble, std::ostream& out,
                          std::ostream& log) {
  validate_generate_options(options);
  const OutputFormat format = parse_output_format(options.output_format);
  const std::string src_lang = options.source_lang.empty() ? ensemble.src_lang : options.source_lang;
  const std::string tgt_lang = options.target_lang.empty() ? ensemble.tgt_lang : options.target_lang;
  const auto sentencepiece = load_sentencepiece(ensemble.spm_model, options);
  const auto target_sentencepiece = load_sentencepiece(ensemble.tgt_spm_model, options);
  const TextCodec source_codec(ensemble.src_dict, sentencepiece.get()),
      target_codec(ensemble.tgt_dict, target_sentencepiece ? target_sentencepiece.get() : sentencepiece.get(),
                   ensemble.detokenizer == "marian");
  const int64_t max_source = max_source_positions(ensemble);
  const int64_t eos = ensemble.src_dict.eos();
  if (options.search.beam > ensemble.tgt_dict.size())
    throw Error("--beam: " + std::to_string(options.search.beam) + " exceeds the target vocabulary of " +
                options.paths[0] + " (" + std::to_string(ensemble.tgt_dict.size()) + " types)");

  if (!options.print_alignment.empty())  // refused before anything is translated
    for (const auto& m : ensemble.models) generation::alignment_layer_key(*m, options.search.alignment_layer);

  GenerateSummary summary;
  ChunkTranslator translator(options, ensemble, source_codec, target_codec);
  const std::string subset = options.data_dir.empty() ? "input" : options.gen_subset;
  ResultSink sink(out, options.results_path, subset);
  std::vector<std::string> hyps, refs;  // detokenized, for BLEU
  auto emit = [&](std::vector<Pending>& chunk) {
    for (auto& r : translator.translate(chunk, summary)) {
      sink.write(format_result(r, target_codec, format));
      if (r.reference) {
        hyps.push_back(r.hypotheses.empty() ? std::string() : target_codec.decode(r.hypotheses[0].tokens));
        refs.push_back(*r.reference);
      }
    }
    sink.flush();
    chunk.clear();
  };
  auto note_truncation = [&](const std::string& where, int64_t full_length) {
    ++summary.truncated;
    log << "warning: " << where << ": " << full_length << " source tokens, truncated to " << max_source
        << " (the model's maximum source positions)\n";
  };

  if (!options.data_dir.empty()) {
    const std::string& dir = options.data_dir;
    check_same_dictionary(ensemble.src_dict, dir + "/dict." + src_lang + ".txt", options.paths[0]);
    check_same_dictionary(ensemble.tgt_dict, dir + "/dict." + tgt_lang + ".txt", options.paths[0]);
    const int64_t pad = ensemble.tgt_dict.pad();
    const int64_t decoder_start = ensemble.models.front()->decoder_starts_with_pad() ? pad : eos;
    data::LanguagePairDataset dataset(dir, options.gen_subset, src_lang, tgt_lang, pad, decoder_start);
    if (ensemble.source_prefix >= 0) dataset.set_source_prefix(ensemble.source_prefix);
    dataset.check_token_ids(ensemble.src_dict.size(), dir + "/dict." + src_lang + ".txt", ensemble.tgt_dict.size(),
                            dir + "/dict." + tgt_lang + ".txt");
    std::vector<int64_t> all(dataset.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    const data::CollatedBatch collated = dataset.collate(all);
    std::vector<Pending> chunk(all.size());
    for (size_t k = 0; k < all.size(); ++k) {
      const int64_t i = collated.ids[k];
      Pending& p = chunk[i];
      p.id = i;
      p.src = collated.src_tokens.row_before_pad(static_cast<int64_t>(k), ensemble.src_dict.pad());
      p.ref = collated.target.row_before_pad(static_cast<int64_t>(k), ensemble.tgt_dict.pad());
      p.source_text = source_codec.decode(p.src);
      p.reference_text = target_codec.decode(*p.ref);
      if (static_cast<int64_t>(p.src.size()) > max_source) {
        note_truncation(options.gen_subset + " sentence " + std::to_string(i), static_cast<int64_t>(p.src.size()));
        truncate_source(p.src, max_source, eos);
      }
    }
    ProgressLine progress("generate " + options.gen_subset, static_cast<long long>(chunk.size()));
    emit(chunk);
    progress.finish();
  } else {
    const bool from_stdin = options.input == "-";
    const std::string origin = from_stdin ? "<stdin>" : options.input;
    std::ifstream file;
    if (!from_stdin) {
      file.open(options.input, std::ios::binary);
      if (!file) throw Error(options.input + ": cannot open input");
    }
    std::istream& in = from_stdin ? std::cin : file;
    const int64_t buffer = raw_input_buffer(options, from_stdin && ::isatty(STDIN_FILENO) == 1, at::get_num_threads());
    std::vector<Pending> chunk;
    std::string line;
    ProgressLine progress("generate", 0);
    const bool constrained = !options.constraints.empty();
    const int64_t max_target = max_target_positions(ensemble);
    for (int64_t id = 0; std::getline(in, line); ++id) {
      Pending p;
      p.id = id;
      if (constrained) {
        auto split = generation::split_constraints(line, target_codec, ensemble.tgt_dict.unk(), origin,
                                                   static_cast<long>(id + 1));
        line = std::move(split.source);
        p.constraints = std::move(split.constraints);
      }
      // A source prefix (a multilingual model's language token) takes one of the positions.
      const bool prefixed = ensemble.source_prefix >= 0;
      EncodedLine encoded = source_codec.encode(line, origin, static_cast<long>(id + 1), max_source - prefixed);
      if (constrained)
        check_room(p.constraints, options.search, static_cast<int64_t>(encoded.ids.size()) + prefixed, max_target,
                   origin, id + 1);
      if (encoded.truncated()) note_truncation(origin + ":" + std::to_string(id + 1), encoded.full_length);
      p.src = std::move(encoded.ids);
      add_source_prefix(p.src, ensemble.source_prefix);
      p.source_text = line;
      chunk.push_back(std::move(p));
      if (static_cast<int64_t>(chunk.size()) >= buffer) {
        emit(chunk);
        progress.update(id + 1);
      }
    }
    if (in.bad()) throw Error(origin + ": read error");
    emit(chunk);
    progress.finish();
  }

  const double seconds = std::max(summary.seconds, 1e-9);
  const torch::Device device = nn::device_of(*ensemble.models.front());
  const std::string computed_on =
      device.is_cuda()
          ? "on " + nn::describe_device(device)
          : std::to_string(at::get_num_threads()) + (at::get_num_threads() == 1 ? " CPU thread" : " CPU threads") +
                (summary.most_parallel_batches > 1
                     ? ", " + std::to_string(summary.most_parallel_batches) + " batches at a time"
                     : "");
  summary.lines.push_back("Translated " + std::to_string(summary.sentences) + " sentences (" +
                          std::to_string(summary.tokens) + " tokens) in " + format_number(summary.seconds, 1) + "s (" +
                          format_number(double(summary.sentences) / seconds, 2) + " sentences/s, " +
                          format_number(double(summary.tokens) / seconds, 2) + " tokens/s, " + computed_on + ")");
  if (summary.truncated > 0)
    summary.lines.push_back(std::to_string(summary.truncated) + " source sentence(s) truncated to " +
                            std::to_string(max_source) + " tokens");
  if (!refs.empty()) {
    summary.lines.push_back("Generate " + subset + " with beam=" + std::to_string(options.search.beam) + ": " +
                            corpus_bleu(hyps, refs, summary.bleu));
  }
  for (const auto& l : summary.lines) {
    if (format == OutputFormat::Fairseq) {
      sink.write(l + "\n");
    } else {
      log << l << "\n";
    }
  }
  sink.commit();
  sink.flush();
  return summary;
}

}  // namespace csan::tasks
