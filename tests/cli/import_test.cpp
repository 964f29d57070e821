// csan-import against the libraries' own outputs (tests/data/interop/, made with fairseq's
// code by tools/interop/): each fairseq fixture imports, and csan-generate's beam-5
// translations of the 200 fixture sentences are the ids fairseq's SequenceGenerator
// produced, with its scores; the imported model decodes in bf16 and int8, as an ensemble,
// after convert-checkpoint and average-checkpoints. Bad inputs are one-line errors naming
// the file and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"

namespace fs = std::filesystem;
using namespace csan::testing;

namespace {

const std::string kInterop = std::string(CSAN_SOURCE_DIR) + "/tests/data/interop";
const std::vector<std::string> kVariants = {"transformer_postnorm_shared", "transformer_iwslt_prenorm_learned",
                                            "transformer_untied_noscale"};

std::string describe(const RunResult& r) { return "exit " + std::to_string(r.exit_code) + "\nstderr: " + r.err; }
bool is_one_line(const std::string& text) { return std::count(text.begin(), text.end(), '\n') == 1; }

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

RunResult import_fairseq(const std::string& variant, const std::string& output, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {bin("csan-import"),
                                   "--fairseq",
                                   kInterop + "/fairseq/" + variant + "/checkpoint.pt",
                                   "--spm",
                                   kInterop + "/spm/en.model",
                                   "--target-spm",
                                   kInterop + "/spm/de.model",
                                   "--output",
                                   output};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

// The first 200 lines of Multi30k's test2016.en, which the fixtures translated.
std::string fixture_sources(const std::string& dir) {
  const std::string test = shared_dir() + "/data/multi30k/test2016.en";
  if (!fs::exists(test)) return "";
  const auto all = lines_of(test);
  std::ofstream out(dir + "/src.en");
  for (size_t i = 0; i < 200 && i < all.size(); ++i) out << all[i] << "\n";
  return dir + "/src.en";
}

// fairseq-generate's settings of the fixtures (FORMATS.md section 5): beam 5, one sentence
// per batch, max length 0.5 * source + 5; --allow-bos where the search must be fairseq's.
RunResult generate(const std::string& path, const std::string& input, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {bin("csan-generate"),
                                   "--path",
                                   path,
                                   "--input",
                                   input,
                                   "--beam",
                                   "5",
                                   "--max-len-a",
                                   "0.5",
                                   "--max-len-b",
                                   "5",
                                   "--batch-size",
                                   "1",
                                   "--output-format",
                                   "fairseq"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

struct Hypothesis {
  // Space-separated target ids ending with </s> (2), as fairseq's hyp.ids.txt, but without
  // <s>, which the printed text leaves out as fairseq-generate's does.
  std::string ids;
  double score;       // natural log (csan-generate prints base 2, as fairseq-generate)
  size_t length = 0;  // tokens with </s> and any <s> (the P- line's count)
};

// A fixture line of hyp.ids.txt as Hypothesis::ids writes it.
std::string printed_ids(const std::string& ids) {
  std::istringstream in(ids);
  std::string id, out;
  while (in >> id)
    if (id != "0") out += (out.empty() ? "" : " ") + id;
  return out;
}
size_t count_fields(const std::string& line) {
  std::istringstream in(line);
  size_t n = 0;
  for (std::string field; in >> field;) ++n;
  return n;
}

// H-lines of csan-generate's fairseq output, by sentence, with the pieces mapped back to
// ids through the target dictionary.
std::map<int, Hypothesis> hypotheses(const std::string& out, const std::string& tgt_dict) {
  std::map<std::string, int> ids = {{"<s>", 0}, {"<pad>", 1}, {"</s>", 2}, {"<unk>", 3}};
  int next = 4;
  for (const auto& line : lines_of(tgt_dict)) ids[line.substr(0, line.find(' '))] = next++;
  std::map<int, Hypothesis> result;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("P-", 0) == 0) {
      const int id = std::stoi(line.substr(2));
      result[id].length = count_fields(line.substr(line.find('\t') + 1));
    }
    if (line.rfind("H-", 0) != 0) continue;
    std::istringstream fields(line.substr(2));
    int id;
    double score;
    std::string tab_rest;
    fields >> id >> score;
    std::string piece, joined;
    while (fields >> piece) joined += std::to_string(ids.count(piece) ? ids.at(piece) : -1) + " ";
    result[id].ids = joined + "2";
    result[id].score = score * std::log(2.0);
  }
  return result;
}

// The output without its last line (the timing summary).
std::string without_summary(const std::string& out) { return out.substr(0, out.rfind("Translated ")); }

class ImportCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("import_cli"); }
  std::string dir_;
};

TEST_F(ImportCli, FairseqTranslationsAreFairseqsOwn) {
  const std::string input = fixture_sources(dir_);
  if (input.empty()) GTEST_SKIP() << "no Multi30k under " << shared_dir();
  for (const auto& variant : kVariants) {
    SCOPED_TRACE(variant);
    const std::string model = dir_ + "/" + variant + ".pt";
    const RunResult imported = import_fairseq(variant, model);
    ASSERT_EQ(imported.exit_code, 0) << describe(imported);
    const RunResult r = generate(model, input, {"--allow-bos"});
    ASSERT_EQ(r.exit_code, 0) << describe(r);
    const std::string fixture = kInterop + "/fairseq/" + variant;
    const auto got = hypotheses(r.out, fixture + "/dict.de.txt");
    const auto ids = lines_of(fixture + "/hyp.ids.txt"), scores = lines_of(fixture + "/hyp.scores.txt");
    ASSERT_EQ(ids.size(), 200u);
    ASSERT_EQ(got.size(), 200u);
    for (int i = 0; i < 200; ++i) {
      EXPECT_EQ(got.at(i).ids, printed_ids(ids[i])) << "sentence " << i;
      EXPECT_EQ(got.at(i).length, count_fields(ids[i])) << "sentence " << i;
      EXPECT_NEAR(got.at(i).score, std::stod(scores[i]), 1e-4) << "sentence " << i;
    }
  }
}

// Every precision, an ensemble, convert-checkpoint and average-checkpoints take the
// imported model as they take csan's own.
TEST_F(ImportCli, ImportedModelWorksEverywhere) {
  const std::string input = dir_ + "/input.en";
  std::ofstream(input) << "Two young men are playing soccer.\nA dog runs through the grass.\n";
  const std::string model = dir_ + "/model.pt";
  ASSERT_EQ(import_fairseq("transformer_iwslt_prenorm_learned", model).exit_code, 0);
  const RunResult fp32 = generate(model, input);
  ASSERT_EQ(fp32.exit_code, 0) << describe(fp32);
  const auto reference = hypotheses(fp32.out, kInterop + "/fairseq/transformer_iwslt_prenorm_learned/dict.de.txt");
  ASSERT_EQ(reference.size(), 2u);
  for (const std::string precision : {"bf16", "int8"}) {
    const RunResult r = generate(model, input, {"--precision", precision});
    ASSERT_EQ(r.exit_code, 0) << precision << ": " << describe(r);
    EXPECT_EQ(hypotheses(r.out, kInterop + "/fairseq/transformer_iwslt_prenorm_learned/dict.de.txt").size(), 2u);
  }
  // An ensemble of the model with itself averages two equal distributions.
  const RunResult ensemble = generate(model + ":" + model, input);
  ASSERT_EQ(ensemble.exit_code, 0) << describe(ensemble);
  EXPECT_EQ(hypotheses(ensemble.out, kInterop + "/fairseq/transformer_iwslt_prenorm_learned/dict.de.txt").at(0).ids,
            reference.at(0).ids);
  const RunResult averaged =
      run({tool("average-checkpoints"), "--inputs", model, model, "--output", dir_ + "/averaged.pt"});
  ASSERT_EQ(averaged.exit_code, 0) << describe(averaged);
  const RunResult from_average = generate(dir_ + "/averaged.pt", input);
  ASSERT_EQ(from_average.exit_code, 0) << describe(from_average);
  EXPECT_EQ(without_summary(from_average.out), without_summary(fp32.out));
  const RunResult converted =
      run({tool("convert-checkpoint"), "--input", model, "--output", dir_ + "/int8.pt", "--precision", "int8"});
  ASSERT_EQ(converted.exit_code, 0) << describe(converted);
  const RunResult from_int8 = generate(dir_ + "/int8.pt", input);
  ASSERT_EQ(from_int8.exit_code, 0) << describe(from_int8);
}

TEST_F(ImportCli, MissingFilesAreOneLineErrors) {
  // A checkpoint without its dictionaries beside it.
  const std::string alone = dir_ + "/alone";
  fs::create_directories(alone);
  fs::copy_file(kInterop + "/fairseq/transformer_postnorm_shared/checkpoint.pt", alone + "/checkpoint.pt");
  RunResult r = run({bin("csan-import"), "--fairseq", alone + "/checkpoint.pt", "--output", dir_ + "/out.pt"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(alone + "/dict.en.txt: no such file"), std::string::npos) << r.err;
  // A missing SentencePiece model.
  r = run({bin("csan-import"), "--fairseq", kInterop + "/fairseq/transformer_postnorm_shared/checkpoint.pt", "--spm",
           dir_ + "/none.model", "--output", dir_ + "/out.pt"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(dir_ + "/none.model: no such file"), std::string::npos) << r.err;
  // A truncated checkpoint.
  std::ifstream in(kInterop + "/fairseq/transformer_postnorm_shared/checkpoint.pt", std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>(in), {}};
  fs::copy_file(kInterop + "/fairseq/transformer_postnorm_shared/dict.en.txt", alone + "/dict.en.txt");
  fs::copy_file(kInterop + "/fairseq/transformer_postnorm_shared/dict.de.txt", alone + "/dict.de.txt");
  std::ofstream(alone + "/checkpoint.pt", std::ios::binary | std::ios::trunc).write(bytes.data(), 20000);
  r = run({bin("csan-import"), "--fairseq", alone + "/checkpoint.pt", "--output", dir_ + "/out.pt"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(alone + "/checkpoint.pt: not a torch.save() zip archive, or a truncated one"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out.pt"));
}

TEST_F(ImportCli, DictionaryOfAnotherSizeIsRefused) {
  const std::string other = dir_ + "/other";
  fs::create_directories(other);
  const auto lines = lines_of(kInterop + "/fairseq/transformer_untied_noscale/dict.en.txt");
  std::ofstream out(other + "/dict.en.txt");
  for (size_t i = 0; i + 8 < lines.size(); ++i) out << lines[i] << "\n";
  out.close();
  fs::copy_file(kInterop + "/fairseq/transformer_untied_noscale/dict.de.txt", other + "/dict.de.txt");
  const RunResult r = import_fairseq("transformer_untied_noscale", dir_ + "/out.pt", {"--dict-dir", other});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("model.encoder.embed_tokens.weight has "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(other + "/dict.en.txt gives "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ + "/out.pt"));
}

// Variants of a fixture written with Debian's python3-torch (torch.save, fairseq's layout),
// all in one Python run: each edit is Python run on `state` (the loaded checkpoint) and
// goes to DIR/NAME/checkpoint.pt beside the fixture's dictionaries. False without
// python3-torch.
bool write_edited_checkpoints(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& edits) {
  const std::string variant = kInterop + "/fairseq/transformer_untied_noscale";
  std::string script = "import argparse, copy, sys, torch\noriginal = torch.load(sys.argv[1])\n";
  for (const auto& [name, edit] : edits) {
    const std::string folder = dir + "/" + name;
    fs::create_directories(folder);
    for (const char* dict : {"dict.en.txt", "dict.de.txt"}) fs::copy_file(variant + "/" + dict, folder + "/" + dict);
    script += "state = copy.deepcopy(original)\n" + edit + "\ntorch.save(state, '" + folder + "/checkpoint.pt')\n";
  }
  return run({"/usr/bin/python3", "-c", script, variant + "/checkpoint.pt"}).exit_code == 0;
}

TEST_F(ImportCli, UnsupportedCheckpointsAreOneLineErrorsNamingTheField) {
  struct Case {
    std::string name, edit, message;
  };
  const std::vector<Case> cases = {
      {"bart", "state['cfg']['model'].arch = 'bart_base'; state['cfg']['model']._name = 'bart_base'",
       "checkpoint.pt: cfg.model.arch: 'bart_base' is not a model of fairseq's transformer family"},
      {"lightconv",
       "state['cfg']['model'] = dict(vars(state['cfg']['model'])); state['cfg']['model'].pop('arch'); "
       "state['cfg']['model']['_name'] = 'lightconv_iwslt_de_en'",
       "checkpoint.pt: cfg.model.arch: 'lightconv_iwslt_de_en' is not a model of fairseq's transformer family"},
      {"missing", "del state['model']['decoder.layers.1.fc2.bias']",
       "checkpoint.pt: the model has no parameter for csan's decoder.layers.1.ffn.fc2.bias"},
      {"shape", "state['model']['encoder.layers.0.fc1.weight'] = torch.zeros(3, 8)",
       "checkpoint.pt: model.encoder.layers.0.fc1.weight has shape [3, 8], the settings give [16, 8]"},
      {"qkv", "del state['model']['encoder.layers.0.self_attn.k_proj.bias']",
       "checkpoint.pt: model.encoder.layers.0.self_attn.k_proj.bias: missing (q_proj, k_proj and v_proj come "
       "together)"},
      {"activation", "state['cfg']['model'].activation_fn = 'tanh'",
       "checkpoint.pt: cfg.model.activation_fn: 'tanh' is not supported"},
      {"norms", "state['cfg']['model'].decoder_normalize_before = True",
       "checkpoint.pt: cfg.model.decoder_normalize_before: differs from encoder_normalize_before"},
      {"type", "state['cfg']['model'].encoder_layers = '2'",
       "checkpoint.pt: cfg.model.encoder_layers: is a string, not an int"},
      {"nocfg", "state['cfg'] = None", "checkpoint.pt: neither cfg.model nor args holds the model's settings"},
  };
  std::vector<std::pair<std::string, std::string>> edits;
  for (const auto& c : cases) edits.emplace_back(c.name, c.edit);
  if (!write_edited_checkpoints(dir_, edits)) GTEST_SKIP() << "no python3-torch to write the variants with";
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string checkpoint = dir_ + "/" + c.name + "/checkpoint.pt";
    const RunResult r = run({bin("csan-import"), "--fairseq", checkpoint, "--output", dir_ + "/out.pt"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/out.pt"));
  }
}

// Pre-2021 checkpoints keep the settings in args (a Namespace) and have no cfg; they import
// to the same model.
TEST_F(ImportCli, SettingsInArgsImportAlike) {
  if (!write_edited_checkpoints(dir_, {{"args", "state['args'] = state['cfg']['model']; del state['cfg']"}}))
    GTEST_SKIP() << "no python3-torch to write the variant with";
  const std::string checkpoint = dir_ + "/args/checkpoint.pt";
  const std::string input = dir_ + "/input.en";
  std::ofstream(input) << "Two young men are playing soccer.\n";
  ASSERT_EQ(run({bin("csan-import"), "--fairseq", checkpoint, "--output", dir_ + "/args.pt"}).exit_code, 0);
  ASSERT_EQ(run({bin("csan-import"), "--fairseq", kInterop + "/fairseq/transformer_untied_noscale/checkpoint.pt",
                 "--output", dir_ + "/cfg.pt"})
                .exit_code,
            0);
  const RunResult a = generate(dir_ + "/args.pt", input), b = generate(dir_ + "/cfg.pt", input);
  ASSERT_EQ(a.exit_code, 0) << describe(a);
  EXPECT_EQ(without_summary(a.out), without_summary(b.out));
}

// The fixture's checkpoint rewritten by Python's zipfile (not torch.save): each record's bytes
// start at a multiple of 64 ("aligned", as torch.save places them: csan maps them in place) or
// at 4 past a multiple of 8 ("unaligned": csan reads them into memory of its own); "short"
// cuts the largest storage's record to half its bytes.
bool write_rezipped_checkpoint(const std::string& folder, const std::string& layout, bool shorten) {
  static const char* const kRezip = R"(
import struct, sys, zipfile
source, target, layout, shorten = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "short"
with zipfile.ZipFile(source) as zin:
    infos = zin.infolist()
    largest = max((i for i in infos if "/data/" in i.filename), key=lambda i: i.file_size)
    with open(target, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zout:
        for info in infos:
            data = zin.read(info)
            if shorten and info is largest:
                data = data[: len(data) // 2]
            start = f.tell() + 30 + len(info.filename.encode()) + 4
            pad = (-start) % 64 if layout == "aligned" else (4 - start) % 8
            out = zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0))
            out.extra = struct.pack("<HH", 0x4346, pad) + bytes(pad)
            zout.writestr(out, data)
)";
  const std::string variant = kInterop + "/fairseq/transformer_untied_noscale";
  fs::create_directories(folder);
  for (const char* dict : {"dict.en.txt", "dict.de.txt"}) fs::copy_file(variant + "/" + dict, folder + "/" + dict);
  return run({"/usr/bin/python3", "-c", kRezip, variant + "/checkpoint.pt", folder + "/checkpoint.pt", layout,
              shorten ? "short" : "whole"})
             .exit_code == 0;
}

// csan uses a torch.save() archive's storages where they lie in the file when they are aligned
// (as torch.save writes them) and reads them otherwise: either way the same model.
TEST_F(ImportCli, RecordsAlignedOrNotImportAlike) {
  const std::string input = dir_ + "/input.en";
  std::ofstream(input) << "Two young men are playing soccer.\nA dog runs through the snow.\n";
  ASSERT_EQ(run({bin("csan-import"), "--fairseq", kInterop + "/fairseq/transformer_untied_noscale/checkpoint.pt",
                 "--output", dir_ + "/original.pt"})
                .exit_code,
            0);
  const RunResult original = generate(dir_ + "/original.pt", input);
  ASSERT_EQ(original.exit_code, 0) << describe(original);
  for (const std::string layout : {"aligned", "unaligned"}) {
    SCOPED_TRACE(layout);
    ASSERT_TRUE(write_rezipped_checkpoint(dir_ + "/" + layout, layout, false));
    const RunResult imported =
        run({bin("csan-import"), "--fairseq", dir_ + "/" + layout + "/checkpoint.pt", "--output", dir_ + "/x.pt"});
    ASSERT_EQ(imported.exit_code, 0) << describe(imported);
    const RunResult translated = generate(dir_ + "/x.pt", input);
    ASSERT_EQ(translated.exit_code, 0) << describe(translated);
    EXPECT_EQ(without_summary(translated.out), without_summary(original.out));
  }
}

// A storage record shorter than the pickle says is a one-line error naming the file and the
// storage, in either layout, and writes nothing.
TEST_F(ImportCli, ShortStorageRecordIsRefused) {
  for (const std::string layout : {"aligned", "unaligned"}) {
    SCOPED_TRACE(layout);
    const std::string folder = dir_ + "/" + layout;
    ASSERT_TRUE(write_rezipped_checkpoint(folder, layout, true));
    const RunResult r = run({bin("csan-import"), "--fairseq", folder + "/checkpoint.pt", "--output", dir_ + "/x.pt"});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(folder + "/checkpoint.pt (data.pkl): pickle offset "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(" has room for "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/x.pt"));
  }
}

// The recipe a format 3 checkpoint embeds (its header's csan.recipe).
std::string embedded_recipe(const std::string& checkpoint) {
  std::ifstream in(checkpoint, std::ios::binary);
  uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), 8);
  std::string header(length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  return nlohmann::json::parse(header)["__metadata__"]["csan.recipe"].get<std::string>();
}

// Fine-tuning: csan-train restores the imported weights (no optimizer state: a fresh one)
// and trains on data binarized with the model's dictionaries and SentencePiece model.
TEST_F(ImportCli, FineTunesFromImportedModel) {
  const std::string variant = kInterop + "/fairseq/transformer_postnorm_shared";
  const std::string model = dir_ + "/model.pt";
  ASSERT_EQ(run({bin("csan-import"), "--fairseq", variant + "/checkpoint.pt", "--spm", kInterop + "/spm/en.model",
                 "--output", model})
                .exit_code,
            0);
  const std::vector<std::string> en = {"A man is walking.", "Two dogs play in the snow.", "A girl reads a book.",
                                       "People are sitting outside."};
  const std::vector<std::string> de = {"Ein Mann geht.", "Zwei Hunde spielen im Schnee.", "Ein Mädchen liest ein Buch.",
                                       "Leute sitzen draußen."};
  for (const std::string split : {"train", "valid"}) {
    std::ofstream src(dir_ + "/" + split + ".en"), tgt(dir_ + "/" + split + ".de");
    for (size_t i = 0; i < en.size(); ++i) src << en[i] << "\n", tgt << de[i] << "\n";
  }
  RunResult r = run({bin("csan-preprocess"), "-s", "en", "-t", "de", "--trainpref", dir_ + "/train", "--validpref",
                     dir_ + "/valid", "--destdir", dir_ + "/bin", "--spm-model", kInterop + "/spm/en.model",
                     "--srcdict", variant + "/dict.en.txt", "--tgtdict", variant + "/dict.de.txt"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::ofstream(dir_ + "/recipe.yaml") << embedded_recipe(model);
  r = run({bin("csan-train"), dir_ + "/recipe.yaml", "--data", dir_ + "/bin", "--save-dir", dir_ + "/ckpt",
           "--restore-file", model, "--set", "optimization.max_update=1", "--set", "dataset.max_tokens=512", "--cpu"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  ASSERT_TRUE(fs::exists(dir_ + "/ckpt/checkpoint_last.pt")) << r.err;
  const std::string input = dir_ + "/input.en";
  std::ofstream(input) << "A man is walking.\n";
  r = generate(dir_ + "/ckpt/checkpoint_last.pt", input);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("H-0"), std::string::npos);
}

TEST_F(ImportCli, HelpAndMissingOptions) {
  RunResult r = run({bin("csan-import"), "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--fairseq"), std::string::npos);
  r = run({bin("csan-import"), "--output", dir_ + "/x.pt"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(is_one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("missing --fairseq"), std::string::npos) << r.err;
}

// ---- Hugging Face MarianMT (tests/data/interop/marian/, made with transformers' code) ----

const std::string kMarian = kInterop + "/marian";

// A copy of the Marian fixture in `dir` with one weight file (pytorch_model.bin or
// model.safetensors), to edit.
std::string marian_copy(const std::string& dir, const std::string& weights = "model.safetensors") {
  fs::create_directories(dir);
  for (const char* file : {"config.json", "vocab.json", "source.spm", "target.spm", "tokenizer_config.json"})
    fs::copy_file(kMarian + "/" + file, dir + "/" + file);
  fs::copy_file(kMarian + "/" + weights, dir + "/" + weights);
  return dir;
}

RunResult import_marian(const std::string& dir, const std::string& output) {
  return run({bin("csan-import"), "--marian", dir, "--output", output});
}

// H-lines' pieces as Marian ids (vocab.json), </s> (0) appended; scores in natural log.
std::map<int, Hypothesis> marian_hypotheses(const std::string& out) {
  const auto vocab = nlohmann::json::parse(std::ifstream(kMarian + "/vocab.json"));
  std::map<int, Hypothesis> result;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("P-", 0) == 0)
      result[std::stoi(line.substr(2))].length = count_fields(line.substr(line.find('\t') + 1));
    if (line.rfind("H-", 0) != 0) continue;
    std::istringstream fields(line.substr(2));
    int id;
    double score;
    fields >> id >> score;
    std::string piece, joined;
    while (fields >> piece) joined += std::to_string(vocab.contains(piece) ? vocab[piece].get<int>() : -1) + " ";
    result[id].ids = joined + "0";
    result[id].score = score * std::log(2.0);
  }
  return result;
}

// transformers' generate() settings of the fixture (FORMATS.md section 5): beam 5,
// max_new_tokens int(0.5 * source + 5) = at most int(0.5 * source) + 4 tokens before </s>,
// no min_length (csan's --min-len 1 would forbid an immediate </s>).
RunResult generate_marian(const std::string& path, const std::string& input, const std::string& format = "fairseq",
                          std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {bin("csan-generate"),  "--path",      path,  "--input",     input, "--beam",    "5",
                                   "--transformers-beam", "--max-len-a", "0.5", "--max-len-b", "4",   "--min-len", "0",
                                   "--output-format",     format};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

TEST_F(ImportCli, MarianTranslationsAreTransformersOwn) {
  const std::string input = fixture_sources(dir_);
  if (input.empty()) GTEST_SKIP() << "no Multi30k under " << shared_dir();
  const std::string model = dir_ + "/marian.pt";
  const RunResult imported = import_marian(kMarian, model);
  ASSERT_EQ(imported.exit_code, 0) << describe(imported);
  const RunResult r = generate_marian(model, input);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto got = marian_hypotheses(r.out);
  const auto ids = lines_of(kMarian + "/hyp.ids.txt"), scores = lines_of(kMarian + "/hyp.scores.txt");
  ASSERT_EQ(ids.size(), 200u);
  ASSERT_EQ(got.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    const std::string expected = ids[i].substr(ids[i].find(' ') + 1);  // without the decoder start
    EXPECT_EQ(got.at(i).ids, expected) << "sentence " << i;
    EXPECT_EQ(got.at(i).length, count_fields(expected)) << "sentence " << i;
    EXPECT_NEAR(got.at(i).score, std::stod(scores[i]), 1e-4) << "sentence " << i;
  }
  // The text, detokenized by target.spm, is transformers' decode().
  const RunResult text = generate_marian(model, input, "plain");
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  std::istringstream lines(text.out);
  const auto expected_text = lines_of(kMarian + "/hyp.txt");
  for (int i = 0; i < 200; ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line, expected_text[i]) << "sentence " << i;
  }
}

TEST_F(ImportCli, MarianFromEitherWeightFileDecodesInEveryPrecision) {
  const std::string input = dir_ + "/input.en";
  std::ofstream(input) << "Two young men are playing soccer.\nA dog runs through the grass.\n";
  const std::string from_bin = dir_ + "/bin.pt", from_safetensors = dir_ + "/safetensors.pt";
  ASSERT_EQ(import_marian(marian_copy(dir_ + "/bin", "pytorch_model.bin"), from_bin).exit_code, 0);
  ASSERT_EQ(import_marian(marian_copy(dir_ + "/st"), from_safetensors).exit_code, 0);
  const RunResult fp32 = generate_marian(from_safetensors, input);
  ASSERT_EQ(fp32.exit_code, 0) << describe(fp32);
  ASSERT_EQ(marian_hypotheses(fp32.out).size(), 2u);
  const RunResult same = generate_marian(from_bin, input);
  EXPECT_EQ(without_summary(same.out), without_summary(fp32.out));
  for (const std::string precision : {"bf16", "int8"}) {
    const RunResult r = generate_marian(from_safetensors, input, "fairseq", {"--precision", precision});
    ASSERT_EQ(r.exit_code, 0) << precision << ": " << describe(r);
    const auto hyps = marian_hypotheses(r.out);
    ASSERT_EQ(hyps.size(), 2u) << precision;
    for (const auto& [i, hyp] : hyps) EXPECT_EQ(hyp.ids.find("-1"), std::string::npos) << precision << ": " << hyp.ids;
  }
}

// Edits config.json's or vocab.json's JSON in place.
void edit_json(const std::string& path, const std::function<void(nlohmann::json&)>& edit) {
  auto value = nlohmann::json::parse(std::ifstream(path));
  edit(value);
  std::ofstream(path, std::ios::trunc) << value.dump();
}

TEST_F(ImportCli, MarianBadInputsAreOneLineErrorsNamingFileAndField) {
  struct Case {
    std::string name, message;
    std::function<void(const std::string& dir)> edit;
  };
  using json = nlohmann::json;
  const std::vector<Case> cases = {
      {"bart", "config.json: model_type: 'bart' is not marian",
       [](const std::string& d) { edit_json(d + "/config.json", [](json& c) { c["model_type"] = "bart"; }); }},
      {"activation", "config.json: activation_function: 'tanh' is not supported",
       [](const std::string& d) { edit_json(d + "/config.json", [](json& c) { c["activation_function"] = "tanh"; }); }},
      {"type", "config.json: d_model: is a string (\"8\"), not an integer",
       [](const std::string& d) { edit_json(d + "/config.json", [](json& c) { c["d_model"] = "8"; }); }},
      {"nosource", "source.spm: no such file", [](const std::string& d) { fs::remove(d + "/source.spm"); }},
      {"notarget", "target.spm: no such file", [](const std::string& d) { fs::remove(d + "/target.spm"); }},
      {"novocab", "vocab.json: no such file", [](const std::string& d) { fs::remove(d + "/vocab.json"); }},
      {"vocabsize", "model.shared.weight: 307 rows, but ",
       [](const std::string& d) { edit_json(d + "/vocab.json", [](json& v) { v["extra_piece"] = 307; }); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = marian_copy(dir_ + "/" + c.name);
    c.edit(dir);
    const RunResult r = import_marian(dir, dir_ + "/out.pt");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/out.pt"));
  }
}

TEST_F(ImportCli, MarianMissingOrMisshapenTensorsAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"del state['model.decoder.layers.1.fc2.bias']",
       "pytorch_model.bin: the model has no parameter for csan's decoder.layers.1.ffn.fc2.bias"},
      {"state['model.encoder.layers.0.fc1.weight'] = torch.zeros(3, 8)",
       "pytorch_model.bin: model.encoder.layers.0.fc1.weight has shape [3, 8], the settings give [16, 8]"},
      {"del state['final_logits_bias']", "pytorch_model.bin: final_logits_bias: missing"},
  };
  std::string script = "import copy, sys, torch\noriginal = torch.load(sys.argv[1])\n";
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string dir = dir_ + "/case" + std::to_string(i);
    marian_copy(dir, "pytorch_model.bin");
    script +=
        "state = copy.deepcopy(original)\n" + cases[i].first + "\ntorch.save(state, '" + dir + "/pytorch_model.bin')\n";
  }
  if (run({"/usr/bin/python3", "-c", script, kMarian + "/pytorch_model.bin"}).exit_code != 0)
    GTEST_SKIP() << "no python3-torch to write the variants with";
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].first);
    const RunResult r = import_marian(dir_ + "/case" + std::to_string(i), dir_ + "/out.pt");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(is_one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(cases[i].second), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ + "/out.pt"));
  }
}

}  // namespace
