// Anchor translation unit for the shared LibTorch precompiled header.
#include "toolkit/torch_pch.h"
