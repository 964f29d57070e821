// The tagging tests' synthetic treebank lives in the toolkit (tools/csan-toy-treebank
// writes it too); the tests use it under their own namespace.
#pragma once

#include "toolkit/data/toy_treebank.h"

namespace csan::testing {
using data::ToyTreebank;
}  // namespace csan::testing
