// How the preload library exports a function to the program: with C linkage and default
// visibility, against the library's -fvisibility=hidden. Only what exports.map lists is exported
// in the end; the attribute makes the definition visible to the version script.
#pragma once

#define HEAPREC_EXPORT extern "C" __attribute__((visibility("default")))
