#include "placement_memory.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "dissect/common/error.h"

namespace dissect::softnic {

void* allocate_placement(size_t bytes, nic::Placement placement) {
  if (placement != nic::Placement::host) {
    throw InvalidArgument(std::string("softnic host-thread engine: queue placement '") +
                          nic::to_string(placement) +
                          "' needs the GPU engine; the host engine reaches host memory only");
  }
  const size_t rounded = (bytes + 4095) & ~size_t{4095};
  void* p = std::aligned_alloc(4096, rounded);
  if (p == nullptr) throw Error("softnic: out of host memory allocating " + std::to_string(bytes));
  std::memset(p, 0, rounded);
  return p;
}

void free_placement(void* address) { std::free(address); }

}  // namespace dissect::softnic
