// Tests labelled `nic` need an RDMA device: without /dev/infiniband/uverbs* they print why on
// stderr and exit 77, which CTest reports as skipped.
#pragma once

#include <glob.h>

#include <cstdio>
#include <cstdlib>

namespace dissect::nictest {

inline void skip_without_rdma_device() {
  glob_t found{};
  const int rc = glob("/dev/infiniband/uverbs*", 0, nullptr, &found);
  const size_t count = rc == 0 ? found.gl_pathc : 0;
  globfree(&found);
  if (count == 0) {
    std::fprintf(stderr, "SKIP: no RDMA device (/dev/infiniband/uverbs* absent)\n");
    std::exit(77);
  }
}

}  // namespace dissect::nictest
