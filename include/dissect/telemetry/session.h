// One rank's telemetry: configuration, slot tables, hardware counters, sampler, and the JSON file.
//
// Contract
// - Process-wide use: process_session() parses DISSECT_TELEMETRY_* once and returns null when
//   telemetry is off. Linked into a program, it is the observer of every NIC the program opens
//   (nic/observer.h): the providers ask for the observer at their first NIC and register devices
//   and QPs through it, so no transport includes telemetry. The file is written at process exit by
//   an atexit handler, or earlier by finalize_process_session() (e.g. when the PE finalises).
// - Tests build their own Session from a Config and call finalize() themselves.
// - Failure: nothing here throws to the caller or changes what the caller computes. Failures are
//   reported as one stderr line naming what failed and why, and telemetry carries on degraded.
// - Threads: every member function is thread-safe.
// - GPU path: a transport that ran its hooks on a GPU copy of a slot (fresh_copy(), cudaMemcpy)
//   registers how to copy it back (add_device_block(); the GPU softnic's gpu_slot.h does it). The
//   copy runs once: when the PE finalises (finalize(), before the file is written) or earlier,
//   through gather_device_block(), when the block is about to be freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dissect/telemetry/config.h"
#include "dissect/telemetry/hw_counters.h"
#include "dissect/telemetry/registry.h"
#include "dissect/telemetry/sampler.h"

namespace dissect::telemetry {

inline constexpr const char* kSchemaVersion = "1.0";

struct SessionOptions {
  RegistryLimits limits;
  size_t max_samples = 100000;  // hw_samples entries kept; the sampler stops when full
};

// One tick of the sampler for one used device.
struct HwSample {
  uint64_t time_ns;  // CLOCK_MONOTONIC
  int device_id;
  uint64_t tx_bytes;  // software totals at that moment
  uint64_t rx_bytes;
  HwCounterValues counters;  // absolute values, rates are computed offline
};

class Session {
 public:
  explicit Session(Config config, SessionOptions options = {});
  ~Session();  // stops the sampler; writes nothing
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Config& config() const { return config_; }

  // Starts the sampler thread when config().sample_ms > 0.
  void start();

  // `hardware` may be null (no hardware counters; "hw_counters" is then empty).
  int register_device(const DeviceInfo& info, std::unique_ptr<HwCounterSource> hardware);
  // Resolves a QP's slot; the first QP on a device takes its hardware-counter baseline.
  QpTelemetry track_qp(int device_id, uint32_t channel_id, uint32_t qp_number);
  // Folds a block copied back from the GPU into its host slot. False (reported) on a shape mismatch.
  bool merge_device_block(QpCounters* slot, const QpCounters& device_copy);
  // `gather` copies one GPU block back and merges it (merge_device_block); it must not throw.
  // Returns the ticket gather_device_block() takes.
  uint64_t add_device_block(std::function<void()> gather);
  // Runs that block's gather now unless it already ran, and forgets it.
  void gather_device_block(uint64_t ticket);
  // Runs every gather not yet run; finalize() calls it before writing the file.
  void gather_device_blocks();

  std::string output_file_name() const;  // dissect_telemetry_<hostname>_<uid>_<pid>.json
  std::string output_path() const;
  // The JSON document as of now (reads the hardware counters of used devices).
  std::string document();
  // Stops the sampler and writes the file, once; later calls return the first outcome.
  bool finalize();

  size_t num_samples() const;

 private:
  bool sample_tick();
  void stop_sampler();

  Config config_;
  SessionOptions options_;
  Registry registry_;
  std::string host_name_;
  std::string process_name_;
  std::string start_time_;
  mutable std::mutex mutex_;  // guards trackers_, samples_, finalized_
  std::vector<std::unique_ptr<HwCounterTracker>> trackers_;  // index = device id
  std::vector<HwSample> samples_;
  std::unique_ptr<PeriodicThread> sampler_;
  std::mutex gather_mutex_;  // held while a gather runs, so finalize never writes half a merge
  std::map<uint64_t, std::function<void()>> device_blocks_;
  uint64_t next_device_block_ = 1;
  std::mutex finalize_mutex_;
  bool finalized_ = false;
  bool written_ = false;
};

// --- process-wide ---
Session* process_session();
// Writes the file now instead of at exit (idempotent). No effect when telemetry is off.
void finalize_process_session();

}  // namespace dissect::telemetry
