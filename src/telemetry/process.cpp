// The process-wide session: parsed once, written at exit; the observer of every NIC the process
// opens (nic/observer.h), installed when this file is linked in.
#include <cstdlib>
#include <mutex>

#include "dissect/nic/observer.h"
#include "dissect/telemetry/session.h"
#include "report.h"

namespace dissect::telemetry {
namespace {

// Never destroyed: the atexit writer may run after other static destructors.
Session* the_session = nullptr;

void finalize_at_exit() {
  if (the_session != nullptr) the_session->finalize();
}

void start_process_session() {
  try {
    Config config = config_from_environment();
    if (!config.enabled) return;
    auto* session = new Session(std::move(config));
    // The exit handler is registered before the sampler starts, so any exit path that runs
    // atexit handlers also stops the sampler before the file is written.
    if (std::atexit(finalize_at_exit) != 0) {
      report("could not register the exit handler; telemetry stays off");
      delete session;
      return;
    }
    the_session = session;
    session->start();
  } catch (const std::exception& error) {
    report(std::string("could not start (") + error.what() + "); telemetry stays off");
  }
}

// The NICs' observer: the process session, as the providers see it.
class SessionObserver final : public nic::Observer {
 public:
  explicit SessionObserver(Session& session) : session_(session) {}
  int open_device(const nic::DeviceDescription& d,
                  std::unique_ptr<HwCounterSource> hardware) override {
    return session_.register_device(d, std::move(hardware));
  }
  QpCounters* track_qp(int device, uint32_t channel, uint32_t qp_number) override {
    return session_.track_qp(device, channel, qp_number).counters;
  }
  uint64_t add_device_block(std::function<void()> gather) override {
    return session_.add_device_block(std::move(gather));
  }
  void gather_device_block(uint64_t ticket) override { session_.gather_device_block(ticket); }
  bool merge_device_block(QpCounters* slot, const QpCounters& device_copy) override {
    return session_.merge_device_block(slot, device_copy);
  }

 private:
  Session& session_;
};

nic::Observer* observe_nics() {
  Session* session = process_session();
  if (session == nullptr) return nullptr;
  static SessionObserver* observer = new SessionObserver(*session);  // never destroyed, as the session
  return observer;
}

// Linked in, telemetry observes the process's NICs: the providers ask for the observer when their
// first NIC opens, after main() has set DISSECT_TELEMETRY_* (nic/observer.h).
[[maybe_unused]] const bool observing = (nic::set_observer_source(observe_nics), true);

}  // namespace

Session* process_session() {
  static std::once_flag once;
  std::call_once(once, start_process_session);
  return the_session;
}

void finalize_process_session() {
  if (Session* session = process_session()) session->finalize();
}

}  // namespace dissect::telemetry
