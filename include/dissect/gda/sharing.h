// Who drives a QP (common/sharing.h), and how its counters are read under each policy.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/sharing.h"
#include "dissect/common/wait.h"

namespace dissect::gda {

using dissect::Backoff;
using dissect::BoundedWait;
using dissect::Sharing;

template <Sharing S, typename T>
DISSECT_HD inline T counter_load(T* p) {
  if constexpr (S == Sharing::exclusive) return *p;
  return load_acquire<Scope::gpu>(p);
}

}  // namespace dissect::gda
