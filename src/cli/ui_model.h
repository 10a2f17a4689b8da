// What `heaprec ui` shows (render/ui_page.h's document), from the profiles it was given: every
// profile as a moment of its process (interval dumps, the peak profile, the final one), the
// processes' last profiles merged when there are several, each process's timeline (from its
// latest profile that has one), and the leaks analysis of the series.
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"
#include "render/ui_page.h"

namespace heaprec::cli {

// `paths[i]` is where `profiles[i]` came from; `source` names them all for the page's title.
render::UiDocument BuildUiDocument(std::vector<profile::Profile> profiles,
                                   const std::vector<std::string>& paths,
                                   const std::string& source);

}  // namespace heaprec::cli
