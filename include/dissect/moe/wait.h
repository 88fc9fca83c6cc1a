// The client's bounded waits: for a dispatch count or a combine flag, naming the rank that waits,
// the expert and the source rank it waits for. On the device a timeout prints and traps, as
// DeepEP's timeout_while does; on the host the wait returns Status::timeout.
#pragma once

#include <cstdint>
#include <cstdio>

#include "dissect/common/atomic.h"
#include "dissect/common/wait.h"
#include "dissect/gda/status.h"

namespace dissect::moe {

struct WaitTarget {
  const char* what;  // "dispatch count", "combine flag"
  uint32_t rank;     // the waiting rank
  uint32_t expert;   // global expert index
  uint32_t source;   // the rank whose signal is awaited
};

DISSECT_HD inline void report_moe_timeout(const WaitTarget& t, uint64_t waited_ns, uint64_t seen) {
  const auto ns = static_cast<unsigned long long>(waited_ns);
  const auto value = static_cast<unsigned long long>(seen);
#if defined(__CUDA_ARCH__)
  printf("dissect moe: rank %u timed out after %llu ns waiting for the %s of expert %u from rank "
         "%u (word reads %llu)\n", t.rank, ns, t.what, t.expert, t.source, value);
  __trap();
#else
  std::fprintf(stderr, "dissect moe: rank %u timed out after %llu ns waiting for the %s of expert "
               "%u from rank %u (word reads %llu)\n", t.rank, ns, t.what, t.expert, t.source, value);
#endif
}

// Waits until done(*word) with acquire loads (the NIC's atomic lands after the data it covers on
// the same QP, so the acquire orders this thread's later reads of that data); *seen gets the value.
template <typename Done>
DISSECT_HD inline gda::Status wait_word(uint64_t* word, Done&& done, const WaitTarget& target,
                                        uint64_t timeout_ns, uint64_t* seen) {
  BoundedWait wait(timeout_ns);
  for (;;) {
    *seen = load_acquire<Scope::system>(word);
    if (done(*seen)) return gda::Status::ok;
    if (wait.expired()) {
      report_moe_timeout(target, wait.waited_ns(), *seen);
      return gda::Status::timeout;
    }
  }
}

}  // namespace dissect::moe
