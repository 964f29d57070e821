// Precompiled header for every torch-using component: parsing torch/torch.h dominates
// the compile time of a translation unit, so it is parsed once.
#pragma once
#include <torch/torch.h>
