// The process-wide session: parsed once, written at exit.
#include <cstdlib>
#include <mutex>

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

}  // namespace

Session* process_session() {
  static std::once_flag once;
  std::call_once(once, start_process_session);
  return the_session;
}

int register_device(const DeviceInfo& info, std::unique_ptr<HwCounterSource> hardware) {
  Session* session = process_session();
  return session != nullptr ? session->register_device(info, std::move(hardware)) : -1;
}

QpTelemetry track_qp(int device_id, uint32_t channel_id, uint32_t qp_number) {
  Session* session = process_session();
  return session != nullptr ? session->track_qp(device_id, channel_id, qp_number) : QpTelemetry{};
}

void finalize_process_session() {
  if (Session* session = process_session()) session->finalize();
}

}  // namespace dissect::telemetry
