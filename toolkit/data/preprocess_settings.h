// The record of the settings a data directory was built with (DESTDIR/preprocess.json).
// A rerun with the same settings rebuilds and replaces the directory; a rerun with
// different ones is refused, so one directory never mixes incompatible data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "toolkit/data/preprocess.h"

namespace csan::data {

inline constexpr const char* kSettingsFile = "preprocess.json";

// Every option that changes the output, in a fixed order; --workers and --destdir are
// not among them.
nlohmann::ordered_json settings_of(const PreprocessOptions& options);
// The record's text: one "key": value per line (core::json_text), so equal settings give
// equal text.
std::string render_settings(const nlohmann::ordered_json& settings);

// DIR/preprocess.json; a missing file or malformed JSON is a csan::Error naming it.
nlohmann::ordered_json read_settings(const std::string& dir);

// Throws csan::Error when `destdir` exists and either holds other settings (naming the
// first differing key) or is a non-empty directory not written by csan-preprocess.
void check_destination(const std::string& destdir, const std::string& rendered_settings);

}  // namespace csan::data
