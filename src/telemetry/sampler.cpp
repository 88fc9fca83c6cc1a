#include "dissect/telemetry/sampler.h"

namespace dissect::telemetry {

PeriodicThread::PeriodicThread(std::chrono::milliseconds period, std::function<bool()> tick)
    : period_(period), tick_(std::move(tick)), thread_([this] { run(); }) {}

PeriodicThread::~PeriodicThread() { stop(); }

void PeriodicThread::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void PeriodicThread::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = std::chrono::steady_clock::now() + period_;
  while (!stopping_) {
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) break;
    lock.unlock();
    bool keep_going = tick_();
    lock.lock();
    if (!keep_going) break;
    // A fixed schedule, not "period after the tick": samples stay evenly spaced.
    next += period_;
  }
}

}  // namespace dissect::telemetry
