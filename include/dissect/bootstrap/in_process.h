// Several PEs in one process, one thread each: two PEs on one GPU (two processes on one GPU would
// time-slice their kernels, DESIGN.md), or one PE per GPU of one process. The PEs of a group
// exchange through shared memory guarded by one mutex and condition variable.
//
//   auto pes = InProcessGroup::create(2);   // on the main thread
//   std::thread t0([&] { run_pe(*pes[0]); });
//   std::thread t1([&] { run_pe(*pes[1]); });
//
// Every collective waits at most `timeout_s` for the other PEs; a PE that never arrives makes the
// others throw BootstrapTimeout naming it. After a timeout the group is broken: every later
// collective on any PE of it throws at once (the PEs that did arrive cannot tell how far the
// missing one got).
#pragma once

#include <memory>
#include <vector>

#include "dissect/bootstrap/bootstrap.h"

namespace dissect::bootstrap {

class InProcessGroup {
 public:
  // `world_size` PEs (1..4096) with local_rank == rank and local_size == world_size. The returned
  // PEs share the group; each must be used by one thread at a time.
  static std::vector<std::unique_ptr<Bootstrap>> create(int world_size, double timeout_s = 120);
};

}  // namespace dissect::bootstrap
