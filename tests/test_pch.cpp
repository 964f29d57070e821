// The translation unit that compiles tests/test_pch.h once for every binary that reuses it.
#include "test_pch.h"
