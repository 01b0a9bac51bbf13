#include "compute/HeapRelease.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace inferscope::compute {

void releaseFreedHeapMemory() {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

} // namespace inferscope::compute
