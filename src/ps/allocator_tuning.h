// How a node's process asks glibc's allocator to keep large freed blocks for
// reuse instead of handing them back to the kernel.
//
// Why: ZeroMQ allocates every received message with malloc, and glibc serves
// blocks above 32 MiB (and, in the I/O thread's own arena, above 64 MiB heaps)
// with a fresh mmap that is unmapped again on free. A 10M-key push is an 80 MB
// key frame: each one cost ~20,000 page faults and the kernel zeroing 80 MB
// before the copy out of the socket could even start, in both the I/O thread
// and the application thread. Served from the main heap and kept there, the
// next frame of that size reuses the pages already mapped.
#pragma once

namespace ps {

// Applies the tuning unless LIBRA_MALLOC_TUNING=0: one allocator arena for
// the threads created from now on, no mmap-served blocks, and freed memory at
// the top of the heap trimmed only beyond 256 MiB. Returns whether it applied
// (it does nothing under allocators that ignore mallopt, e.g. ASan's).
// Threads that had their own arena before this call keep it.
bool TuneAllocatorForLargeMessages();

}  // namespace ps
