// How the report and the summary say what a profile of an attached process does not cover
// (analysis/attach_facts.h).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/attach_facts.h"

namespace heaprec::render {

// "2026-12-07 15:02:59 UTC", the latest attach; "?" when the profile does not say.
std::string AttachTime(const analysis::AttachFacts& attach);

// "306.8 MiB in 1-2 KiB blocks (98%, 300049 blocks), ...": the largest `classes` size classes of
// the heap at the attach, as heaprec attach read it; "" when it was not read.
std::string HeldBySize(const analysis::AttachFacts& attach, std::size_t classes);

// "2026-12-07 15:02:59 UTC: only allocations since are counted below; the heap held 313.9 MiB
// then: 306.8 MiB in 1-2 KiB blocks (98%, 300049 blocks), ...": what the summary's "attached" line
// and the pages' header say.
std::string AttachedSummary(const analysis::AttachFacts& attach);

// The report's lines, on its first screen: when the process was attached and what its heap held
// then, not in the profile.
void PrintAttachNote(const analysis::AttachFacts& attach, std::ostream& out);

}  // namespace heaprec::render
