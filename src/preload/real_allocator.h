// The allocator heaprec forwards to: glibc's, reached through the __libc_* names it exports.
//
// Calling these directly avoids the classic bootstrap trap of interposers that find the next malloc
// with dlsym(RTLD_NEXT), since dlsym itself may call calloc before the pointer is known.
#pragma once

#include <cstddef>

extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* p);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}
