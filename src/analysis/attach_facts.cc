#include "analysis/attach_facts.h"

#include <cstdio>
#include <string>

#include "analysis/profile_view.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

std::vector<HeldSizeClass> ParseHeldBySize(const std::string& classes) {
  std::vector<HeldSizeClass> parsed;
  for (std::size_t at = 0; at < classes.size();) {
    std::size_t end = std::min(classes.find(',', at), classes.size());
    const std::string entry = classes.substr(at, end - at);
    at = end + 1;
    int k = 0;
    long long bytes = 0, blocks = 0;
    if (std::sscanf(entry.c_str(), "%d:%lld:%lld", &k, &bytes, &blocks) == 3 && k >= 0 &&
        bytes >= 0 && blocks >= 0) {
      parsed.push_back({k, bytes, blocks});
    }
  }
  return parsed;
}

}  // namespace

std::optional<AttachFacts> AttachFactsOf(const profile::Profile& profile) {
  AttachFacts facts;
  facts.attaches = NumericCommentField(profile, schema::kAttachedField);
  if (facts.attaches <= 0) return std::nullopt;
  facts.attached_at_s = NumericCommentField(profile, schema::kAttachedAtField);
  facts.injected = NumericCommentField(profile, schema::kInjectedField) == 1;
  if (!facts.injected) return facts;
  facts.held_at_attach = NumericCommentField(profile, schema::kHeldAtAttachField);
  facts.heap_in_use = NumericCommentField(profile, schema::kHeapInUseField);
  facts.unattributed = NumericCommentField(profile, schema::kUnattributedField);
  facts.held_walked = NumericCommentField(profile, schema::kHeldWalkedField);
  facts.held_by_size =
      ParseHeldBySize(CommentField(profile, schema::kHeldBySizeField).value_or(""));
  return facts;
}

}  // namespace heaprec::analysis
