// DESTDIR/preprocess.json: written in its fixed layout through nlohmann, compared by
// value (so a record written by an earlier build, whose numbers printed with 17 digits,
// is the same settings), and a damaged or foreign record is an error naming the file,
// the place or the key.
#include "toolkit/data/preprocess_settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/error_message.h"
#include "toolkit/core/atomic_file.h"

namespace fs = std::filesystem;
using namespace csan::data;
using csan::testing::message_of;

namespace {

PreprocessOptions options() {
  PreprocessOptions o;
  o.source_lang = "src";
  o.target_lang = "tgt";
  o.trainpref = {"raw/train"};
  o.validpref = {"raw/valid"};
  o.testpref = {"raw/test"};
  o.joined_dictionary = true;
  o.spm.vocab_size = 100;
  o.spm.character_coverage = 0.9995;
  o.filter.max_len_ratio = 1.5;
  return o;
}

// What csan-preprocess wrote for options() before it used nlohmann::json.
const std::string kEarlierRecord = R"({
  "format": 1,
  "source_lang": "src",
  "target_lang": "tgt",
  "only_source": false,
  "trainpref": ["raw/train"],
  "validpref": ["raw/valid"],
  "testpref": ["raw/test"],
  "spm_model": "",
  "spm_per_language": false,
  "spm_vocab_size": 100,
  "spm_model_type": "unigram",
  "spm_character_coverage": 0.99950000000000006,
  "spm_input_sentence_size": 0,
  "spm_seed": 1,
  "joined_dictionary": true,
  "srcdict": "",
  "tgtdict": "",
  "thresholdsrc": 0,
  "thresholdtgt": 0,
  "nwordssrc": -1,
  "nwordstgt": -1,
  "padding_factor": 8,
  "min_len": 0,
  "max_len": 0,
  "max_len_ratio": 1.5
}
)";

std::string destination_with(const std::string& name, const std::string& record) {
  const fs::path dir = fs::temp_directory_path() / ("csan_preprocess_settings_" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  csan::write_file_atomically((dir / kSettingsFile).string(), record);
  return dir.string();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(PreprocessSettings, RecordKeepsItsLayoutWithShortestNumbers) {
  EXPECT_EQ(render_settings(settings_of(options())), replaced(kEarlierRecord, "0.99950000000000006", "0.9995"));
}

TEST(PreprocessSettings, AnEarlierBuildsRecordHoldsTheSameSettings) {
  const std::string dir = destination_with("earlier", kEarlierRecord);
  EXPECT_NO_THROW(check_destination(dir, render_settings(settings_of(options()))));
  auto defaults = options();
  defaults.spm.character_coverage = 1.0;  // "1" then, "1.0" now
  const std::string dir_of_defaults =
      destination_with("earlier-defaults", replaced(kEarlierRecord, "0.99950000000000006", "1"));
  EXPECT_NO_THROW(check_destination(dir_of_defaults, render_settings(settings_of(defaults))));
}

TEST(PreprocessSettings, OtherSettingsNameTheFirstKeyThatDiffers) {
  auto other = options();
  other.spm.character_coverage = 1.0;
  other.trainpref.push_back("more/train");
  EXPECT_EQ(message_of([&] {
              check_destination(destination_with("other", kEarlierRecord), render_settings(settings_of(other)));
            }),
            fs::temp_directory_path().string() + "/csan_preprocess_settings_" + std::to_string(::getpid()) +
                "/other: was built with different settings (trainpref: [\"raw/train\"] there, [\"raw/train\", "
                "\"more/train\"] now); use another --destdir or remove it");
  const std::string extra =
      destination_with("extra", replaced(kEarlierRecord, "\"format\": 1,", "\"format\": 1,\n  \"extra\": 2,"));
  EXPECT_NE(message_of([&] {
              check_destination(extra, render_settings(settings_of(options())));
            }).find("different settings (extra: 2 there, (absent) now)"),
            std::string::npos);
  const std::string missing = destination_with("missing", replaced(kEarlierRecord, "  \"spm_seed\": 1,\n", ""));
  EXPECT_NE(message_of([&] {
              check_destination(missing, render_settings(settings_of(options())));
            }).find("different settings (spm_seed: (absent) there, 1 now)"),
            std::string::npos);
}

TEST(PreprocessSettings, DamagedRecordsNameTheFileAndPlace) {
  const std::string damaged =
      destination_with("damaged", replaced(kEarlierRecord, "\"only_source\": false,", "\"only_source\": fals,"));
  EXPECT_EQ(message_of([&] { check_destination(damaged, render_settings(settings_of(options()))); }),
            damaged +
                "/preprocess.json: malformed JSON at line 5, column 22: syntax error while parsing value - "
                "invalid literal; last read: '\"only_source\": fals,'; use another --destdir or remove it");
  const std::string array = destination_with("array", "[1, 2]\n");
  EXPECT_EQ(message_of([&] { check_destination(array, render_settings(settings_of(options()))); }),
            array + "/preprocess.json: not a settings record (a JSON object); use another --destdir or remove it");
  EXPECT_EQ(message_of([&] { read_settings(array + "/none"); }),
            array + "/none/preprocess.json: missing (not a directory written by csan-preprocess)");
}

}  // namespace
