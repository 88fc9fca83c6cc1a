#include "doorbell_forwarder.h"

#include <utility>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"

namespace dissect::softnic {

DoorbellForwarder::DoorbellForwarder(std::string owner) : owner_(std::move(owner)) {}

DoorbellForwarder::~DoorbellForwarder() { stop(); }

std::unique_lock<std::mutex> DoorbellForwarder::lock_control() const {
  waiters_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mutex_);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  return lock;
}

void DoorbellForwarder::add(uint32_t qpn, const uint64_t* mailbox, uint64_t* engine_register) {
  auto lock = lock_control();
  if (stopped_) {
    throw Error(owner_ + " doorbell forwarder: stopped; cannot forward QP " + hex(qpn));
  }
  for (const Entry& e : entries_) {
    if (e.qpn == qpn) {
      throw InvalidArgument(owner_ + " doorbell forwarder: QP " + hex(qpn) + " is already forwarded");
    }
  }
  // The register starts at the mailbox's value, so the first change is the first doorbell.
  const uint64_t initial = load_acquire<Scope::system>(mailbox);
  store_release<Scope::system>(engine_register, initial);
  entries_.push_back(Entry{qpn, mailbox, engine_register, initial, ForwarderCounters{}});
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  wake_.notify_one();
}

void DoorbellForwarder::remove(uint32_t qpn) {
  // The thread holds the lock for a whole pass, so once we hold it no pass is using the entry.
  auto lock = lock_control();
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->qpn == qpn) {
      entries_.erase(it);
      return;
    }
  }
  throw InvalidArgument(owner_ + " doorbell forwarder: QP " + hex(qpn) + " is not forwarded");
}

const DoorbellForwarder::Entry& DoorbellForwarder::find_locked(uint32_t qpn,
                                                               const char* during) const {
  for (const Entry& e : entries_) {
    if (e.qpn == qpn) return e;
  }
  throw InvalidArgument(owner_ + " doorbell forwarder: " + during + ": QP " + hex(qpn) +
                        " is not cpu-assisted (or was destroyed)");
}

ForwarderCounters DoorbellForwarder::counters(uint32_t qpn) const {
  auto lock = lock_control();
  return find_locked(qpn, "counters").counters;
}

void DoorbellForwarder::stop() {
  {
    auto lock = lock_control();
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  auto lock = lock_control();
  entries_.clear();
}

// One mailbox: acquire its value; if it moved, store the newest value to the register with a
// release store (the header's steps 1-3). The mailbox is read again just before the store so that
// a doorbell rung meanwhile is carried by this one (both reads count as updates seen).
bool DoorbellForwarder::forward(Entry& e) {
  const uint64_t value = load_acquire<Scope::system>(e.mailbox);
  if (value == e.last) return false;
  ++e.counters.mailbox_updates;
  const uint64_t latest = load_acquire<Scope::system>(e.mailbox);
  if (latest != value) ++e.counters.mailbox_updates;
  store_release<Scope::system>(e.engine_register, latest);
  e.last = latest;
  ++e.counters.doorbells_forwarded;
  return true;
}

bool DoorbellForwarder::poll_locked() {
  bool forwarded = false;
  for (Entry& e : entries_) forwarded |= forward(e);
  return forwarded;
}

// Spins over the mailboxes as a proxy thread does (a sleeping forwarder would add its wake-up to
// every doorbell), yields when a pass found nothing, and lets go of the lock whenever a
// control-path call waits for it (std::mutex is not fair: relocking at once could starve it).
void DoorbellForwarder::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (entries_.empty()) {
      wake_.wait(lock, [this] { return stopping_ || !entries_.empty(); });
      continue;
    }
    const bool forwarded = poll_locked();
    if (waiters_.load(std::memory_order_relaxed) != 0 || !forwarded) {
      lock.unlock();
      while (waiters_.load(std::memory_order_relaxed) != 0) std::this_thread::yield();
      if (!forwarded) std::this_thread::yield();
      lock.lock();
    }
  }
}

AssistedDoorbell route_doorbell(nic::Nic& nic, const nic::QpAttributes& a, QueueMemory& m) {
  if (a.doorbell != nic::DoorbellPath::cpu_assisted) return AssistedDoorbell{};
  AssistedDoorbell words;
  words.memory = nic.allocate(2 * 64, nic::Placement::host);  // zero-filled
  words.mailbox = static_cast<uint64_t*>(words.memory);
  words.engine_register = words.mailbox + 64 / sizeof(uint64_t);
  m.doorbell = words.engine_register;
  m.submitter_doorbell = words.mailbox;
  return words;
}

}  // namespace dissect::softnic
