#include "dissect/proxy/proxy.h"

#include <cstdio>

#include "dissect/common/error.h"
#include "dissect/proxy/placement.h"
#include "ring_storage.h"
#include "worker.h"

namespace dissect::proxy {

namespace {
std::vector<std::unique_ptr<Poster>> ring_posters(const std::vector<nic::QpHandle>& qps) {
  std::vector<std::unique_ptr<Poster>> posters;
  for (const nic::QpHandle& qp : qps) posters.push_back(make_mlx5_ring_poster(qp));
  return posters;
}
}  // namespace

Proxy::Proxy(const ProxyConfig& config, std::vector<nic::QpHandle> worker_qps, std::vector<Window> windows)
    : Proxy(config, ring_posters(worker_qps), std::move(windows)) {}

Proxy::Proxy(const ProxyConfig& config, std::vector<std::unique_ptr<Poster>> posters, std::vector<Window> windows)
    : config_(config), windows_(std::move(windows)) {
  validate(config_);
  if (posters.size() != config_.workers) {
    throw InvalidArgument("proxy: " + std::to_string(posters.size()) + " QPs given for " +
                          std::to_string(config_.workers) + " workers (one QP per worker)");
  }
  if (windows_.empty() || windows_.size() > MAX_WINDOWS) {
    throw InvalidArgument("proxy: " + std::to_string(windows_.size()) + " windows (1.." +
                          std::to_string(MAX_WINDOWS) + ")");
  }
  storage_ = std::make_unique<RingStorage>(config_);
  for (uint32_t w = 0; w < config_.workers; ++w) {
    std::vector<RingHandle> rings;
    for (uint32_t r = w; r < config_.rings; r += config_.workers) rings.push_back(storage_->host_view(r));
    workers_.push_back(std::make_unique<Worker>(w, std::move(posters[w]), config_, windows_, std::move(rings),
                                                storage_->producer_state_host_readable()));
  }
}

Proxy::~Proxy() {
  if (!running_) return;
  const ShutdownReport report = stop(StopMode::abandon);
  if (!report.drained) std::fprintf(stderr, "dissect: proxy destroyed with work left:\n%s", report.describe().c_str());
}

// Worker w's core: the configured list, else the NIC's (or the given) NUMA node, else none.
std::vector<int> Proxy::choose_cores(std::vector<std::string>* placements) const {
  std::vector<int> list = config_.cores;
  std::string how = "cores list";
  if (list.empty() && config_.pin) {
    int node = -1;
    if (!config_.nic_device.empty()) {
      node = nic_numa_node(config_.nic_device);
      how = "NUMA node " + std::to_string(node) + " of " + config_.nic_device;
    } else if (config_.numa_node >= 0) {
      node = config_.numa_node;
      how = "NUMA node " + std::to_string(node) + " (given)";
    }
    list = node_cpus(node);
  }
  std::vector<int> cores(config_.workers, -1);
  placements->assign(config_.workers, "unpinned (no cores list and no known NUMA node)");
  if (!config_.pin) placements->assign(config_.workers, "unpinned (pinning off)");
  if (!config_.pin || list.empty()) return cores;
  for (uint32_t w = 0; w < config_.workers; ++w) {
    cores[w] = list[w % list.size()];
    (*placements)[w] = "core " + std::to_string(cores[w]) + " from " + how;
  }
  return cores;
}

void Proxy::start() {
  if (running_) return;
  std::vector<std::string> placements;
  const std::vector<int> cores = choose_cores(&placements);
  for (uint32_t w = 0; w < workers_.size(); ++w) {
    try {
      workers_[w]->start(cores[w], placements[w]);
    } catch (...) {
      for (uint32_t v = 0; v < w; ++v) workers_[v]->request_stop(StopMode::abandon);
      for (uint32_t v = 0; v < w; ++v) workers_[v]->join();
      throw;
    }
  }
  running_ = true;
}

ShutdownReport Proxy::stop(StopMode mode) {
  if (running_) {
    for (auto& w : workers_) w->request_stop(mode);
    for (auto& w : workers_) w->join();
    running_ = false;
  }
  return collect_report();
}

ShutdownReport Proxy::collect_report() const {
  ShutdownReport report;
  for (const auto& w : workers_) {
    for (const PendingRing& p : w->pending()) report.pending.push_back(p);
  }
  report.drained = report.pending.empty();
  return report;
}

RingHandle Proxy::ring(uint32_t r) const {
  if (r >= config_.rings) throw InvalidArgument("proxy: ring " + std::to_string(r) + " of " + std::to_string(config_.rings));
  return storage_->producer_view(r);
}

RingHandle Proxy::host_view(uint32_t r) const {
  if (r >= config_.rings) throw InvalidArgument("proxy: ring " + std::to_string(r) + " of " + std::to_string(config_.rings));
  return storage_->host_view(r);
}

std::vector<WorkerStats> Proxy::stats() const {
  std::vector<WorkerStats> out;
  for (const auto& w : workers_) out.push_back(w->stats());
  return out;
}

std::string Proxy::placement() const {
  return workers_.empty() ? std::string() : workers_.front()->stats().placement;
}

}  // namespace dissect::proxy
