#include "dissect/nic/observer.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace dissect::nic {
namespace {

// Constant-initialised: set_observer_source() runs during other objects' static initialisation.
std::atomic<ObserverSource> the_source{nullptr};

Observer* resolve() {
  const ObserverSource source = the_source.load(std::memory_order_acquire);
  if (source != nullptr) return source();
  const char* asked = std::getenv("DISSECT_TELEMETRY_ENABLE");
  if (asked != nullptr && std::strcmp(asked, "1") == 0) {
    std::fputs("dissect telemetry: DISSECT_TELEMETRY_ENABLE=1, but this program does not link "
               "dissect_telemetry: nothing observes its NICs and no telemetry file is written\n",
               stderr);
  }
  return nullptr;
}

}  // namespace

void set_observer_source(ObserverSource source) {
  the_source.store(source, std::memory_order_release);
}

Observer* observer() {
  static std::once_flag once;
  static Observer* the_observer = nullptr;
  std::call_once(once, [] { the_observer = resolve(); });
  return the_observer;
}

}  // namespace dissect::nic
