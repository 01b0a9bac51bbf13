#pragma once
// Gives freed heap memory back to the system. glibc keeps what a lab frees (engines' host
// copies, lavapipe's device memory, packing buffers) in its heaps for reuse; after the window's
// scripted run it held 1.14 GB resident of which 0.68 GB was free (malloc_trim returned it,
// leaving 0.46 GB). The window calls this when each lab job ends.
#include <cstddef>

namespace inferscope::compute {

void releaseFreedHeapMemory();

// Blocks of at least `bytes` get pages of their own, which go back to the system when freed.
// glibc otherwise raises that threshold to the size of each large block freed (up to 32 MB),
// so the buffers of an engine built and dropped inside a lab (lavapipe's device memory is host
// memory) stay in its heaps until the job ends: the speculative lab, which builds a draft
// engine per scheme, peaked at 1.18 GB with glibc's default and 0.89 GB with 1 MiB. Called
// first thing by both programs.
void giveLargeBlocksTheirOwnPages(std::size_t bytes = std::size_t(1) << 20);

} // namespace inferscope::compute
