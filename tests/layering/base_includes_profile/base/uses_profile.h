// A source tree for the test `layering_refuses_base_on_profile` (tests/layering/CMakeLists.txt):
// base may include the standard library and POSIX, never a header of heaprec, so the layering
// check must fail on the second include below.
#pragma once

#include <string>

#include "profile/profile.h"
