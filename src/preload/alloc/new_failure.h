// What operator new does when the allocator returns null, without linking libstdc++.
#pragma once

#include <cstddef>

namespace heaprec::preload {

// operator new's failure path: the new-handler loop, then std::bad_alloc (found in the program's
// libstdc++ by name), or null for the nothrow forms. May call the program's new-handler.
void* HandleNewFailure(std::size_t size, std::size_t alignment, bool nothrow);

}  // namespace heaprec::preload
