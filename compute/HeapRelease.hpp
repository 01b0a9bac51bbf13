#pragma once
// Gives freed heap memory back to the system. glibc keeps what a lab frees (engines' host
// copies, lavapipe's device memory, packing buffers) in its heaps for reuse; after the window's
// scripted run it held 1.14 GB resident of which 0.68 GB was free (malloc_trim returned it,
// leaving 0.46 GB). The window calls this when each lab job ends.
namespace inferscope::compute {

void releaseFreedHeapMemory();

} // namespace inferscope::compute
