// Precompiled header for the test binaries that do not load LibTorch (the CLI tests and the
// torch-free units): gtest and nlohmann/json cost each of their files 2-3 s of parsing.
#pragma once
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>
