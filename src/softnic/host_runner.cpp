// The host-thread engine strategy (engine_runner.h): HostEngine's threads and a status block.
#include <cstdio>
#include <cstring>

#include "dissect/common/error.h"
#include "engine/host_engine.h"
#include "engine_runner.h"

namespace dissect::softnic {
namespace {

class HostRunner final : public EngineRunner {
 public:
  explicit HostRunner(uint32_t threads) : threads_(threads) { std::memset(&status_, 0, sizeof status_); }
  void start(NicTables* tables, uint32_t generation) override {
    engine_.start(tables, threads_, &status_, generation);
  }
  // The threads finish their windows and join: nothing to time out on.
  void stop(uint64_t) override { engine_.stop(); }
  void drain(NicTables*, uint32_t, uint64_t) override {
    throw InvalidArgument("softnic: drain() runs the engine kernel; this softnic's engine is host threads");
  }
  bool active() const override { return engine_.running(); }
  bool faulted() const override { return false; }
  EngineStatus status() const override {
    EngineStatus s;
    s.heartbeat = __atomic_load_n(&status_.heartbeat, __ATOMIC_ACQUIRE);
    s.wqes_executed = __atomic_load_n(&status_.wqes_executed, __ATOMIC_RELAXED);
    s.consumer = __atomic_load_n(&status_.consumer, __ATOMIC_RELAXED);
    s.current_qpn = __atomic_load_n(&status_.current_qpn, __ATOMIC_RELAXED);
    s.last_syndrome = __atomic_load_n(&status_.last_syndrome, __ATOMIC_ACQUIRE);
    s.last_error_qpn = __atomic_load_n(&status_.last_error_qpn, __ATOMIC_RELAXED);
    s.phase = __atomic_load_n(&status_.phase, __ATOMIC_ACQUIRE);
    s.generation = __atomic_load_n(&status_.generation, __ATOMIC_RELAXED);
    s.reserved = 0;
    return s;
  }

 private:
  uint32_t threads_;
  EngineStatus status_;  // written by the engine threads with atomics
  HostEngine engine_;    // joined before status_ goes (declared after it)
};

}  // namespace

std::string describe_engine_status(const EngineStatus& s, uint32_t nic_id, const SoftNicOptions& options) {
  const char* phase = s.phase == ENGINE_RUNNING ? "running" : s.phase == ENGINE_EXITED ? "exited" : "not started";
  char line[320];
  std::snprintf(line, sizeof line,
                "softnic %u (%s engine, device %d): phase %s, generation %u, heartbeat %llu, "
                "WQEs executed %llu, last QP 0x%x at consumer index %llu, last error syndrome "
                "0x%x on QP 0x%x",
                nic_id, to_string(options.engine), options.device, phase, s.generation,
                static_cast<unsigned long long>(s.heartbeat),
                static_cast<unsigned long long>(s.wqes_executed), s.current_qpn,
                static_cast<unsigned long long>(s.consumer), s.last_syndrome, s.last_error_qpn);
  return line;
}

std::unique_ptr<EngineRunner> host_runner(uint32_t threads) {
  if (threads == 0 || threads > 256) {
    throw InvalidArgument("softnic host engine: engine_threads = " + std::to_string(threads) + " (1..256)");
  }
  return std::make_unique<HostRunner>(threads);
}

}  // namespace dissect::softnic
