#include <string>

#include "dissect/proxy/proxy.h"

namespace dissect::proxy {

std::string ShutdownReport::describe() const {
  if (pending.empty()) return "proxy: drained, nothing pending\n";
  std::string out;
  for (const PendingRing& p : pending) {
    out += "ring " + std::to_string(p.ring) + " (worker " + std::to_string(p.worker) + "): " +
           std::to_string(p.published) + " published and " + std::to_string(p.reserved) +
           " reserved from descriptor index " + std::to_string(p.first_unconsumed) + ", " +
           std::to_string(p.in_flight) + " in flight from index " + std::to_string(p.first_in_flight) + "\n";
  }
  return out;
}

}  // namespace dissect::proxy
