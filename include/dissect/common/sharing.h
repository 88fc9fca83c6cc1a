// Who drives a queue (a QP, a proxy ring): the compile-time policy both submission paths take.
#pragma once

namespace dissect {

// exclusive: one thread drives the queue (no atomics on its counters). shared: several threads of
// one GPU (or host threads) reserve, publish, ring and poll it concurrently.
enum class Sharing { exclusive, shared };

}  // namespace dissect
