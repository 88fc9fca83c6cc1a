#include "dissect/proxy/memory.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "dissect/common/error.h"

namespace dissect::proxy {

Allocator host_allocator() {
  Allocator a;
  a.allocate = [](size_t bytes) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr) throw Error("proxy: host allocation of " + std::to_string(bytes) + " bytes failed");
    std::memset(p, 0, rounded);
    return p;
  };
  a.release = [](void* p) { std::free(p); };
  return a;
}

}  // namespace dissect::proxy
