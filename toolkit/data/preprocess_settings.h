// The record of the settings a data directory was built with (DESTDIR/preprocess.json).
// A rerun with the same settings rebuilds and replaces the directory; a rerun with
// different ones is refused, so one directory never mixes incompatible data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "toolkit/data/preprocess.h"

namespace csan::data {

inline constexpr const char* kSettingsFile = "preprocess.json";

// Ordered (key, JSON value) pairs of every option that changes the output; --workers
// and --destdir are not among them.
std::vector<std::pair<std::string, std::string>> settings_of(const PreprocessOptions& options);
// One "key": value per line, in a fixed order, so equal settings give equal text.
std::string render_settings(const std::vector<std::pair<std::string, std::string>>& settings);

// The (key, JSON value) pairs of a rendered record, in order (the inverse of
// render_settings; lines that are not "key": value are skipped).
std::vector<std::pair<std::string, std::string>> parse_settings(const std::string& rendered);

// Throws csan::Error when `destdir` exists and either holds other settings (naming the
// first differing key) or is a non-empty directory not written by csan-preprocess.
void check_destination(const std::string& destdir, const std::string& rendered_settings);

}  // namespace csan::data
