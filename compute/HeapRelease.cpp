#include "compute/HeapRelease.hpp"

#include <algorithm>
#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace inferscope::compute {

void releaseFreedHeapMemory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

void giveLargeBlocksTheirOwnPages(std::size_t bytes) {
#if defined(__GLIBC__)
    // A fixed threshold also turns glibc's dynamic one off.
    mallopt(M_MMAP_THRESHOLD, int(std::min<std::size_t>(bytes, INT_MAX)));
#else
    (void)bytes;
#endif
}

} // namespace inferscope::compute
