// Precompiled header for every torch-using component: parsing torch/torch.h costs
// ~15 s per translation unit on this machine, so it is parsed once.
#pragma once
#include <torch/torch.h>
