// A background thread that calls a function every period until stopped (RCCL's SAMPLE_MS sampler).
//
// Contract: the tick runs on the sampler's own thread, never on the data path; it returns false
// to end sampling early (e.g. its buffer is full). stop() wakes the thread at once (it does not
// wait out the period) and joins it; it is idempotent and also run by the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace dissect::telemetry {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds period, std::function<bool()> tick);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void stop();

 private:
  void run();

  std::chrono::milliseconds period_;
  std::function<bool()> tick_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace dissect::telemetry
