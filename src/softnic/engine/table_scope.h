// The scope of the engine's accesses to its own NIC's tables.
#pragma once

#include "dissect/common/atomic.h"

namespace dissect::softnic {

// The scope of the engine's loads of its tables (MR and QP contexts) and of its atomics on its own
// NIC's words (the pipe, the QP-context cache, counters): on the host one coherence domain; on the
// GPU the tables are in GPU memory, and only another GPU's engine reaches them from outside (with
// system-scope atomics, which the same L2 performs). A system-scope atomic on the H200 took about
// four times a GPU-scope one (phase counters, 2026-12-03: the connection-state lookup's exchange
// 2,650 cycles, the pipe's two GPU-scope claims 590).
#if defined(__CUDA_ARCH__)
inline constexpr Scope TABLE_SCOPE = Scope::gpu;
#else
inline constexpr Scope TABLE_SCOPE = Scope::system;
#endif

}  // namespace dissect::softnic
