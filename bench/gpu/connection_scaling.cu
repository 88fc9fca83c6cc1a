// `dissect gpu-connection-scaling`: Figure 10a on the softnic's connection-state model (a model
// calibrated to the paper's curve, profile.cpp cx7-ib; not a ConnectX). GPU threads post 8 B
// inline RDMA WRITEs, `visit` writes per connection visit (32 per doorbell), cycling their QPs,
// through Q active QPs per direction of NIC A:
//   send     A's Q QPs write to `peers` NICs (Q / peers each): the paper's one sender and its targets
//   receive  `senders` NICs' Q QPs write to A, measured as A's received rate
//   both     both at once: A sends through Q QPs and receives through Q others
// Every NIC is a SoftNic on one GPU (its own engine kernel); the requester's engine executes
// each write and claims the responder's pipe for its receive processing (engine/connection_state.h).
// Each row carries the rate, the profile, the cache size, the misses per message on A, and the
// model's own prediction for the point (model_rate below: what the profile alone allows, so a
// measured rate far below it is the engine's, not the model's).
// --transport rc,dc (or dc): Figure 10b, rate against connections per NIC with 256-write bursts,
// send only: RC through the rig above (one RC QP a connection), DC through A's DCIs to that many
// DCTs on the peers (measure_dc below; docs/dc.md, "Figure 10b").
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/clock.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "harness.cuh"

namespace dissect::bench {
namespace {

constexpr uint32_t BATCH = 32;         // writes per doorbell: a window of the engine
// Destination slots per QP (a DCI: per DCT): its message m writes m % SLOTS. A batch's writes land
// in distinct slots, as a window's lanes copy them at once: with 8 slots the engine ended each
// window at its ninth write (disjoint_prefix), so Figure 10 ran four windows per doorbell, each
// paying the model's per-window lookups and pipe claims (H100 phase counters, stop 39).
constexpr uint32_t SLOTS = BATCH;
constexpr uint32_t ACTIVE_SQ = 256;    // WQEBBs of a writing QP (a CQE every 32 reclaims them)
constexpr uint32_t PASSIVE_SQ = 8;     // of a QP that only answers
using Policy = gda::ordering::gpu_fence;

struct Config {
  int device = 0;
  std::vector<uint32_t> qps{64, 256, 1024, 2048, 4096, 8192, 16384, 32768};
  std::vector<std::string> directions{"send", "receive", "both"};
  std::vector<uint32_t> visits{32, 8192};
  std::string nic_profile = "cx7-ib";
  uint32_t peers = 7;        // NICs A sends to (send, both)
  uint32_t senders = 1;      // NICs that send to A (receive)
  uint32_t submitters = 256; // GPU threads per direction, each cycling its QPs
  uint64_t messages = 1u << 22;  // at least this many per direction per run
  uint32_t engine_ctas = 16, peer_engine_ctas = 2, engine_warps = 8;
  uint32_t runs = 1;
  uint32_t dcis = 64;  // --transport dc: A's DCIs (the paper's 1,984 DCI-peer pairs: 64 x 31 peers)
};

// One QP that writes: where, and who owns its progress (one submitter thread).
struct Flow {
  nic::QpHandle qp;
  uint8_t* dst;  // its SLOTS x 8 B in the responder's buffer
  uint32_t rkey;
  uint32_t group;  // 0: A's sends, 1: writes to A
};

DISSECT_HD inline uint64_t value_of(uint64_t message, uint32_t flow) {
  return (message * 0x9e3779b97f4a7c15ull) ^ (uint64_t{flow} << 40) ^ 1;
}

struct Span {
  unsigned long long start, end;
  unsigned long long waited;  // ns spent waiting for the NIC model: send-queue room (room_for), the drain
  uint32_t status;
  uint32_t group;
};

// Waits, timed, for send-queue room for `wqebbs` more WQEBBs before the post would
// (gda::wait_for_room): the submitter's time spent waiting for the NIC model, which tells a row
// bound by the model's engine from one bound by its submitters (bottleneck_note).
__device__ inline gda::Status room_for(const nic::QpHandle& qp, uint32_t wqebbs, unsigned long long* waited) {
  const uint64_t end = qp.state->resv_head + wqebbs;
  if (gda::has_room(qp, end, qp.state->cons_idx)) return gda::Status::ok;
  const unsigned long long t0 = now_ns();
  const gda::Status s = gda::wait_for_room<Policy, gda::Sharing::exclusive>(qp, end);
  *waited += now_ns() - t0;
  return s;
}

// Thread t of a group drives flows first + t, first + t + threads, ... in turn, `visits` visits of
// `visit` writes each (a multiple of BATCH, or one batch of `visit`), then drains them.
struct Assignment {
  uint32_t first, threads, flows, visits;
};

__global__ void submit_kernel(const Flow* flows, const Assignment* assignments, uint32_t groups,
                              uint32_t visit, Span* spans) {
  const uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t g = 0, t = thread;
  while (g < groups && t >= assignments[g].threads) t -= assignments[g++].threads;
  if (g >= groups) return;
  const Assignment a = assignments[g];
  const uint32_t mine = (a.flows - t + a.threads - 1) / a.threads;  // flows t, t + threads, ...
  const uint32_t batch = visit < BATCH ? visit : BATCH;
  gda::Status s = gda::Status::ok;
  unsigned long long waited = 0;
  const unsigned long long start = now_ns();
  for (uint32_t v = 0; v < a.visits * mine && s == gda::Status::ok; ++v) {
    const uint32_t f = a.first + t + (v % mine) * a.threads;
    const Flow flow = flows[f];
    for (uint32_t w = 0; w < visit && s == gda::Status::ok; w += batch) {
      uint64_t end = 0;
      s = room_for(flow.qp, visit - w < batch ? visit - w : batch, &waited);
      if (s != gda::Status::ok) break;
      s = gda::post_batch<Policy, gda::Sharing::exclusive>(
          flow.qp, visit - w < batch ? visit - w : batch, 1, gda::Completion::signaled, &end,
          [&](const nic::QpHandle& q, uint64_t index, uint32_t, gda::Completion c) {
            return gda::write_rdma_write_value_wqe(q, index, value_of(index, f), 8,
                                                   reinterpret_cast<uint64_t>(flow.dst + (index % SLOTS) * 8),
                                                   flow.rkey, c);
          });
    }
  }
  // The drain is waiting for the model too: where the send queues hold a thread's every visit (a
  // few visits a QP at 32,768 QPs), it is all the waiting there is.
  const unsigned long long drain = now_ns();
  for (uint32_t k = 0; k < mine && s == gda::Status::ok; ++k) {
    s = gda::quiet<Policy, gda::Sharing::exclusive>(flows[a.first + t + k * a.threads].qp);
  }
  waited += now_ns() - drain;
  spans[thread] = Span{start, now_ns(), waited, static_cast<uint32_t>(s), g};
}

// The model's own prediction for a point (profile.h, engine/connection_state.h): the rate the
// pipes allow, each NIC's pipe time per 32-write window from its per-message costs and its
// expected misses. A direct-mapped cache of N entries under F contexts cycled in turn: a context
// hits while no other shares its slot, 1 - (1 - 1/N)^(F - 1) of lookups miss. A visit of V writes
// is V / 32 windows; only its first can miss on the whole set, the rest on the contexts active at
// once (one per submitter thread and direction).
double miss_fraction(double contexts, double entries) {
  if (entries <= 0 || contexts <= 1) return 0;
  return 1 - std::pow(1 - 1 / entries, contexts - 1);
}
double window_misses(double contexts, double active, double entries, uint32_t visit) {
  const double windows = std::max(1.0, visit / double(BATCH));
  return (miss_fraction(contexts, entries) + (windows - 1) * miss_fraction(active, entries)) / windows;
}
double model_rate(const softnic::TimingProfile& p, const std::string& direction, uint32_t q,
                  uint32_t visit, const Config& c) {
  const double n = p.qp_cache_entries, per = std::min<double>(visit, BATCH);
  const double ts = softnic::pipe_ns(p, 1, 8);  // ns per sent message
  const double tr = p.receive_message_rate_mps > 0 ? 1e3 / p.receive_message_rate_mps : 0;
  const double s = p.send_context_miss_ns, r = p.receive_context_miss_ns;
  const double active = std::min<double>(c.submitters, q);  // contexts in use at once, a direction
  auto send_time = [&](double contexts, double act) { return per * ts + window_misses(contexts, act, n, visit) * s; };
  auto receive_time = [&](double contexts, double act) { return per * tr + window_misses(contexts, act, n, visit) * r; };
  double window_ns = 0;  // A's pipe per window of the measured direction, and the far side's share
  if (direction == "send") {
    window_ns = std::max(send_time(q, active), receive_time(double(q) / c.peers, active / c.peers) / c.peers);
  } else if (direction == "receive") {
    window_ns = std::max(receive_time(q, active), send_time(double(q) / c.senders, active / c.senders) / c.senders);
  } else {  // A's cache holds its Q requesters and its Q responders
    const double a = send_time(2.0 * q, 2 * active) + receive_time(2.0 * q, 2 * active);
    const double peer = (send_time(2.0 * q / c.peers, 2 * active / c.peers) +
                         receive_time(2.0 * q / c.peers, 2 * active / c.peers)) / c.peers;
    window_ns = std::max(a, peer);
  }
  return window_ns > 0 ? per / window_ns * 1e3 : 0;  // M msg/s
}

// The NICs, QPs and buffers of one point, made before any engine starts (gpu_engine.h, HAZARDS).
struct Rig {
  std::vector<std::unique_ptr<softnic::SoftNic>> nics;  // 0: A
  std::vector<std::unique_ptr<nic::ProtectionDomain>> pds;
  std::vector<uint8_t*> buffers;
  std::vector<nic::MemoryRegion> mrs;
  std::vector<std::unique_ptr<nic::QueuePair>> qps;
  std::vector<Flow> flows;
  std::vector<uint32_t> group_flows{0, 0};
  Flow* device_flows = nullptr;
  Assignment* device_assignments = nullptr;
  Span* spans = nullptr;
  uint32_t threads = 0;
  cudaStream_t stream = nullptr;
  ~Rig() {
    for (auto& n : nics) n->stop();
    qps.clear();
    cudaFree(device_flows);
    cudaFree(device_assignments);
    cudaFree(spans);
    if (stream) cudaStreamDestroy(stream);
  }
};

std::unique_ptr<Rig> make_rig(const Config& c, const std::string& direction, uint32_t q) {
  auto rig = std::make_unique<Rig>();
  const bool sends = direction != "receive", receives = direction != "send";
  const uint32_t far = direction == "receive" ? c.senders : c.peers;
  const uint32_t on_a = (sends ? q : 0) + (receives ? q : 0);
  const uint32_t per_far = (q + far - 1) / far;  // QP i of a direction is on far NIC i % far
  const uint32_t on_far = (sends ? per_far : 0) + (receives ? per_far : 0);
  for (uint32_t i = 0; i <= far; ++i) {
    softnic::SoftNicOptions o = softnic::gpu_engine_options();
    o.device = c.device;
    // A window waits its modelled latency (2.7 us on cx7-ib: cqe_release_ns) in its warp, so a NIC
    // sending at the full rate needs A's engine size: A, and the senders of receive mode.
    o.engine_ctas = i == 0 || direction == "receive" ? c.engine_ctas : c.peer_engine_ctas;
    o.engine_warps_per_cta = c.engine_warps;
    o.profile = softnic::timing_profile(c.nic_profile);
    o.max_qps = i == 0 ? on_a : on_far;
    o.max_mrs = 4;
    o.start_engine = false;
    rig->nics.push_back(std::make_unique<softnic::SoftNic>(o));
    rig->pds.push_back(rig->nics.back()->create_pd());
    const size_t bytes = size_t{o.max_qps} * SLOTS * 8;
    rig->buffers.push_back(static_cast<uint8_t*>(rig->nics.back()->allocate(bytes, nic::Placement::gpu)));
    rig->mrs.push_back(rig->pds.back()->register_memory(rig->buffers.back(), bytes, nic::ACCESS_ALL));
  }
  std::vector<uint32_t> used(far + 1, 0);  // responder slots taken on each NIC
  auto connect = [&](uint32_t from, uint32_t to, uint32_t group) {
    nic::QpAttributes active, passive;
    active.sq_wqebbs = ACTIVE_SQ;
    active.max_inline = 8;
    active.placement = nic::Placement::gpu;
    passive = active;
    passive.sq_wqebbs = PASSIVE_SQ;
    auto requester = rig->pds[from]->create_qp(active);
    auto responder = rig->pds[to]->create_qp(passive);
    requester->connect(responder->endpoint());
    responder->connect(requester->endpoint());
    uint8_t* dst = rig->buffers[to] + size_t{used[to]++} * SLOTS * 8;
    rig->flows.push_back(Flow{requester->handle(), dst, rig->mrs[to].rkey, group});
    ++rig->group_flows[group];
    rig->qps.push_back(std::move(requester));
    rig->qps.push_back(std::move(responder));
  };
  // Requesters of one group consecutive (its submitters' flows), peers taken in turn.
  if (sends) for (uint32_t i = 0; i < q; ++i) connect(0, 1 + i % far, 0);
  if (receives) for (uint32_t i = 0; i < q; ++i) connect(1 + i % far, 0, 1);
  for (uint32_t g = 0; g < 2; ++g) rig->threads += std::min(c.submitters, rig->group_flows[g]);
  cudaSetDevice(c.device);
  check_cuda(cudaStreamCreateWithFlags(&rig->stream, cudaStreamNonBlocking), "connection scaling: stream");
  check_cuda(cudaMalloc(&rig->device_flows, sizeof(Flow) * rig->flows.size()), "flows");
  check_cuda(cudaMemcpy(rig->device_flows, rig->flows.data(), sizeof(Flow) * rig->flows.size(),
                        cudaMemcpyHostToDevice), "flows");
  check_cuda(cudaMalloc(&rig->device_assignments, sizeof(Assignment) * 2), "assignments");
  check_cuda(cudaMalloc(&rig->spans, sizeof(Span) * rig->threads), "spans");
  return rig;
}

// How many visits each flow gets: at least two full cycles over every flow (the first pays the
// cold misses), and at least `messages` writes per direction.
uint32_t visits_per_flow(const Config& c, uint32_t flows, uint32_t visit) {
  const uint64_t cycle = uint64_t{flows} * visit;
  return static_cast<uint32_t>(std::max<uint64_t>(2, (c.messages + cycle - 1) / cycle));
}

// The WQEs the model serves from a queue before turning to the next (profile.h): with a backlog
// the quantum, not the engine's budget, decides how often a context is looked up.
std::string quantum_knob(const softnic::TimingProfile& p) {
  return p.scheduling_quantum_wqes != 0 ? std::to_string(p.scheduling_quantum_wqes) : "0 (the engine's own budget)";
}

// The share of the submitters' time spent waiting for the NIC model (Span::waited).
double waiting_share(const std::vector<Span>& spans) {
  double waited = 0, busy = 0;
  for (const Span& s : spans) {
    waited += double(s.waited);
    busy += double(s.end - s.start);
  }
  return busy > 0 ? waited / busy : 0;
}

std::string percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f %%", 100 * share);
  return text;
}

// What bounded a rate, from the share of the submitters' time spent waiting for the model
// (send-queue room and the drain, Span::waited) and the rate's share of the model's ceiling. A
// producer ahead of its consumer through a bounded queue waits 1 - consumer / producer of its
// time, one behind it never: so the submitters bound a rate when they hardly waited (under
// SUBMITTERS_WAITING: the NIC model completed their WQEs as fast as they came); else the NIC side,
// the model's own curve (`at_model`, the caller's name for it) when the rate is near its ceiling,
// the softnic GPU engine when it is not. (Half their time, the line until stop 40, named the
// submitters for rows at 95-101 % of the ceiling whose submitters waited 24-47 % of theirs:
// throttled by the model, H200, stop 39.)
constexpr double SUBMITTERS_WAITING = 0.1;
std::string bottleneck_note(double share, double waiting, const std::string& at_model,
                            const std::string& rate = "the rate") {
  const std::string figures = " (the submitters waited for send-queue room and the drain " + percent(waiting) +
                              " of their time; " + rate + " is " + percent(share) + " of the model ceiling)";
  if (waiting < SUBMITTERS_WAITING) return "the GPU submitters" + figures;
  return (share >= 0.9 ? at_model : "softnic GPU engine") + figures;
}

Result measure(const Config& c, const std::string& direction, uint32_t q, uint32_t visit) {
  const softnic::TimingProfile profile = softnic::timing_profile(c.nic_profile);
  Result r;
  r.experiment = "gpu-connection-scaling";
  r.label = direction + ", " + std::to_string(q) + " QPs per direction, " + std::to_string(visit) +
            " writes per visit";
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = "gpu-thread";
  const uint32_t far = direction == "receive" ? c.senders : c.peers;
  r.pe_layout = std::to_string(far + 1) + " NICs, 1 GPU (NIC A and " + std::to_string(far) +
                (direction == "receive" ? " senders)" : " peers)");
  const double predicted = model_rate(profile, direction, q, visit, c);
  r.knobs = {{"direction", direction},
             {"transport", "rc"},
             {"qps_per_direction", std::to_string(q)},
             {"writes_per_visit", std::to_string(visit)},
             {"payload_bytes", "8"},
             {"inline", "yes"},
             {"far_nics", std::to_string(far)},
             {"submitter_threads_per_direction", std::to_string(std::min(c.submitters, q))},
             {"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " + std::to_string(c.engine_warps) +
                                  " warps on A, " +
                                  std::to_string(direction == "receive" ? c.engine_ctas : c.peer_engine_ctas) +
                                  " CTAs on each other NIC"},
             {"nic_profile", softnic::profile_name(profile)},
             {"qp_cache_entries", std::to_string(profile.qp_cache_entries)},
             {"scheduling_quantum_wqes", quantum_knob(profile)},
             {"model", softnic::connection_model(profile)
                           ? std::string("connection-state model of the softnic, calibrated to the paper's Figure 10 "
                                         "(P-H100) in profile '") + profile.name + "', not a ConnectX"
                           : std::string("none: profile '") + profile.name +
                                 "' has no connection-state model, so QP count costs only the engine's own time"}};
  Metric rate{"message rate", "Mmsg/s", {}}, received{"received rate at A", "Mmsg/s", {}};
  // Both: A's pipe carries its two directions, which need not run at one rate (A's engine and its
  // peers' race for it), and the model's ceiling is per direction at equal rates: their mean is
  // what compares with it.
  Metric mean{"mean of A's two directions", "Mmsg/s", {}};
  Metric misses{"A misses per message", "misses", {}}, ceiling{"model ceiling", "Mmsg/s", {}};
  Metric waiting{"submitters waiting for the model", "%", {}}, lookups{"A lookups per message", "lookups", {}};
  bool valid = true;
  for (uint32_t run = 0; run < c.runs; ++run) {
    auto rig = make_rig(c, direction, q);
    std::vector<Assignment> a;
    uint32_t first = 0;
    for (uint32_t g = 0; g < 2; ++g) {
      const uint32_t n = rig->group_flows[g];
      if (n == 0) continue;
      a.push_back(Assignment{first, std::min(c.submitters, n), n, visits_per_flow(c, n, visit)});
      first += n;
    }
    check_cuda(cudaMemcpy(rig->device_assignments, a.data(), sizeof(Assignment) * a.size(),
                          cudaMemcpyHostToDevice), "assignments");
    softnic::reserve_local_memory(8192);
    softnic::preload_kernel(reinterpret_cast<const void*>(&submit_kernel), "connection scaling submitters");
    for (auto& n : rig->nics) n->start();
    const uint32_t block = 64;
    submit_kernel<<<(rig->threads + block - 1) / block, block, 0, rig->stream>>>(
        rig->device_flows, rig->device_assignments, static_cast<uint32_t>(a.size()), visit, rig->spans);
    check_cuda(cudaGetLastError(), "submit_kernel");
    gpu::wait_for_stream(rig->stream, "connection scaling submitters", 600,
                         [&] { return rig->nics[0]->describe_status(); });
    std::vector<Span> spans(rig->threads);
    // On the rig's own non-blocking stream: a copy on the legacy stream beside a running engine is
    // what gpu_engine.h's HAZARDS warn of.
    check_cuda(cudaMemcpyAsync(spans.data(), rig->spans, sizeof(Span) * spans.size(), cudaMemcpyDeviceToHost,
                               rig->stream), "spans");
    check_cuda(cudaStreamSynchronize(rig->stream), "spans");
    const softnic::ContextCacheCounters cc = rig->nics[0]->context_cache_counters();
    for (auto& n : rig->nics) n->stop();
    double group_rate[2] = {0, 0}, group_waiting[2] = {0, 0};
    for (uint32_t g = 0, k = 0; g < 2; ++g) {
      if (rig->group_flows[g] == 0) continue;
      unsigned long long start = ~0ull, end = 0;
      std::vector<Span> mine;
      for (const Span& s : spans) {
        if (s.group != k) continue;
        valid = valid && s.status == 0;
        start = std::min(start, s.start);
        end = std::max(end, s.end);
        mine.push_back(s);
      }
      const double messages = double(a[k].flows) * a[k].visits * visit;
      group_rate[g] = end > start ? messages / double(end - start) * 1e3 : 0;
      group_waiting[g] = waiting_share(mine);
      ++k;
    }
    // Payloads: the last SLOTS writes of every flow landed in its slots.
    std::vector<uint64_t> slots(SLOTS);
    for (uint32_t f = 0, k = 0, in_group = 0; f < rig->flows.size(); ++f, ++in_group) {
      const Flow& flow = rig->flows[f];
      if (f > 0 && flow.group != rig->flows[f - 1].group) ++k, in_group = 0;
      const uint64_t sent = uint64_t{a[k].visits} * visit;
      check_cuda(cudaMemcpyAsync(slots.data(), flow.dst, SLOTS * 8, cudaMemcpyDeviceToHost, rig->stream),
                 "payload check");
      check_cuda(cudaStreamSynchronize(rig->stream), "payload check");
      for (uint64_t m = sent - std::min<uint64_t>(sent, SLOTS); m < sent; ++m) {
        valid = valid && slots[m % SLOTS] == value_of(m, f);
      }
    }
    const double measured = direction == "receive" ? group_rate[1] : group_rate[0];
    rate.runs.push_back(summarize({measured}));
    waiting.runs.push_back(summarize({100 * (direction == "receive" ? group_waiting[1] : group_waiting[0])}));
    if (direction == "both") {
      received.runs.push_back(summarize({group_rate[1]}));
      mean.runs.push_back(summarize({(group_rate[0] + group_rate[1]) / 2}));
    }
    const double total = direction == "both" ? 2.0 * a[0].flows * a[0].visits * visit
                                             : double(a[0].flows) * a[0].visits * visit;
    misses.runs.push_back(summarize({double(cc.send_misses + cc.receive_misses) / total}));
    // One lookup a window each side: 1 / 32 a message at 32 writes a doorbell (send), as much
    // again for what A receives (both).
    lookups.runs.push_back(summarize({double(cc.send_lookups + cc.receive_lookups) / total}));
    ceiling.runs.push_back(summarize({predicted}));
  }
  // What bounded the rate (bottleneck_note), so that the report never takes an engine- or
  // submitter-bound point for the model's.
  if (softnic::connection_model(profile) && predicted > 0 && !rate.runs.empty()) {
    const double compared = direction == "both" ? mean.p50() : rate.p50();
    r.knobs.push_back({"bottleneck", bottleneck_note(compared / predicted, waiting.p50() / 100, "connection-state model",
                                                     direction == "both" ? "the two directions' mean" : "the rate")});
  }
  r.metrics = {rate, waiting};
  if (direction == "both") {
    r.metrics.push_back(received);
    r.metrics.push_back(mean);
  }
  r.metrics.push_back(misses);
  r.metrics.push_back(lookups);
  if (predicted > 0) r.metrics.push_back(ceiling);  // a profile without pipe costs predicts nothing
  r.payload_validated = valid;
  return r;
}

// ---- Figure 10b's DC rows (--transport dc): A's DCIs, each visit a burst to one DCT ----
//
// NIC A holds `dcis` DCIs, one submitter thread each (a DCI's bursts are never interleaved with
// another thread's); the `connections` destinations are DCTs, DCT j on peer NIC 1 + j % peers.
// DCI t's visit v is a burst of `visit` 8 B inline writes (compact AV, 32 a doorbell) to DCT
// (t + v) % connections, so over a cycle every DCI visits every DCT: DCIs x connections DCI-peer
// pairs (the paper's x axis). What the softnic executes for it (engine/connection_state.h
// dc_connection_state, engine/dc_timing.h pace_dc_write): the DCI's context in A's cache (a new
// destination re-installs it: a send miss), the DCT's per-initiator responder state in the
// target NIC's cache (dc_responder_key: one context per DCI-DCT pair, the receive-side context),
// the pipes, and the DC connect (dc_connect_ns) when a DCI changes DCT or was idle.

// One DCT as a DCI's thread reaches it: its AV, and where DCI t's slots are in the target buffer.
struct DcSlotRoute {
  gda::DcDestination to;
  uint8_t* base;  // DCI t's SLOTS x 8 B start at base + t * SLOTS * 8
  uint32_t rkey;
};

DISSECT_HD inline uint8_t* dc_slot(const DcSlotRoute& route, uint32_t dci, uint32_t write) {
  return route.base + (size_t{dci} * SLOTS + write % SLOTS) * 8;
}

// Thread t drives DCI t alone: `visits` bursts of `visit` writes, destinations cycled, then quiets.
__global__ void dc_submit_kernel(const nic::QpHandle* dcis, uint32_t count, const DcSlotRoute* routes,
                                 uint32_t destinations, uint32_t visits, uint32_t visit, Span* spans) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  const nic::QpHandle dci = dcis[t];
  const uint32_t batch = visit < BATCH ? visit : BATCH;
  gda::Status s = gda::Status::ok;
  unsigned long long waited = 0;
  const unsigned long long start = now_ns();
  const uint32_t wqebbs = gda::dc_value_wqebbs(gda::AvForm::compact, 8);
  for (uint32_t v = 0; v < visits && s == gda::Status::ok; ++v) {
    const DcSlotRoute route = routes[(t + v) % destinations];
    for (uint32_t w = 0; w < visit && s == gda::Status::ok; w += batch) {
      uint64_t end = 0;
      s = room_for(dci, (visit - w < batch ? visit - w : batch) * wqebbs, &waited);
      if (s != gda::Status::ok) break;
      s = gda::post_batch<Policy, gda::Sharing::exclusive>(
          dci, visit - w < batch ? visit - w : batch, wqebbs,
          gda::Completion::signaled, &end, [&](const nic::QpHandle& q, uint64_t index, uint32_t i, gda::Completion c) {
            const uint32_t m = w + i;
            return gda::write_dc_write_value_wqe(q, index, route.to, gda::AvForm::compact,
                                                 value_of(uint64_t{v} * visit + m, t), 8,
                                                 reinterpret_cast<uint64_t>(dc_slot(route, t, m)), route.rkey, c);
          });
    }
  }
  const unsigned long long drain = now_ns();
  if (s == gda::Status::ok) s = gda::quiet<Policy, gda::Sharing::exclusive>(dci);
  waited += now_ns() - drain;
  spans[t] = Span{start, now_ns(), waited, static_cast<uint32_t>(s), 0};
}

// What the model the softnic executes allows a DC point, and what bounds it.
// WQEs of one DC batch of the softnic's engines (dc_batch.h: up to WINDOW_LANES WQEBBs, one 8 B
// compact-AV inline write each), the most one modelled wait covers.
constexpr uint32_t DC_ENGINE_BATCH = 32;

struct DcPrediction {
  double pipes = 0;   // the pipes with the connection-state model's misses (0: no pipe cost)
  double engine = 0;  // the softnic's DC batches, one modelled wait each (0: no profile, nothing waited)
  double ceiling() const {
    if (pipes > 0 && engine > 0) return std::min(pipes, engine);
    return pipes > 0 ? pipes : engine;
  }
};

// The pipes: A pays a sent message, a send miss at each visit's first WQE (the new destination
// re-installs the DCI's context) and on the rest as often as another active DCI holds its slot;
// a target NIC pays a received message, and a receive miss at a visit's first WQE as often as the
// cycled DCI-DCT pairs of that NIC evict each other (miss_fraction, as for RC's QPs) and on the
// rest as often as the DCIs active there at once do. A's traffic spreads over `far` targets.
// The engine: the softnic executes a DCI's writes in DC batches (src/softnic/engine/dc_batch.h), up
// to DC_ENGINE_BATCH announced WQEs, one modelled wait per batch in the DCI's engine warp, as an RC
// window waits: doorbell_to_data_ns from the doorbell the batch's visit saw, the batch's connects
// (one a visit: the burst stays on one DCT), then data_to_cqe_ns less the engine's own CQE hop
// (cqe_release_ns: cqe_transit_ns). Each of this rig's batches is a
// doorbell the submitter rang after the previous batch's CQE freed its ring, so each waits the
// whole doorbell-to-CQE: a warp moves `visit` writes per ceil(visit / batch) x (doorbell_to_data +
// data_to_cqe - cqe_transit, at least doorbell_to_data) + dc_connect_ns, and DCIs beyond A's
// engine warps share warps (DCI i on warp i % warps). The engine's own instructions and memory
// round trips are not in the bound, which is why it is a ceiling.
DcPrediction model_rate_dc(const softnic::TimingProfile& p, uint32_t connections, uint32_t dcis,
                           uint32_t visit, const Config& c) {
  DcPrediction out;
  if (p.enabled == 0) return out;
  const double far = std::min<double>(c.peers, connections), b = visit;
  double sent = softnic::pipe_ns(p, 1, 8), received = 0;
  if (softnic::connection_model(p)) {
    const double n = p.qp_cache_entries;
    const double first = 1 / b, rest = 1 - first;
    sent += p.send_context_miss_ns * (first + rest * miss_fraction(dcis, n));
    const double pairs = double(dcis) * connections / far, active = std::max(1.0, dcis / far);
    received = (p.receive_message_rate_mps > 0 ? 1e3 / p.receive_message_rate_mps : 0) +
               p.receive_context_miss_ns * (first * miss_fraction(pairs, n) + rest * miss_fraction(active, n));
  }
  const double per_message = std::max(sent, received / far);
  if (per_message > 0) out.pipes = 1e3 / per_message;
  const double batches = std::ceil(b / std::min<double>(b, DC_ENGINE_BATCH));
  const double visit_ns = batches * double(softnic::cqe_release_ns(p, p.doorbell_to_data_ns)) + p.dc_connect_ns;
  if (visit_ns > 0) {
    out.engine = std::min<double>(dcis, double(c.engine_ctas) * c.engine_warps) * b * 1e3 / visit_ns;
  }
  return out;
}

// The NICs, DCIs, DCTs and buffers of one DC point, made before any engine starts.
struct DcRig {
  std::vector<std::unique_ptr<softnic::SoftNic>> nics;  // 0: A, the DCIs' NIC; 1..far: the DCTs'
  std::vector<std::unique_ptr<nic::ProtectionDomain>> pds;
  std::vector<uint8_t*> buffers;  // a target NIC's slots: its DCTs in turn, each dcis x SLOTS x 8 B
  std::vector<nic::MemoryRegion> mrs;
  std::vector<std::unique_ptr<nic::DcTarget>> dcts;  // DCT j on NIC 1 + j % far
  std::vector<std::unique_ptr<nic::QueuePair>> dcis;
  std::vector<DcSlotRoute> routes;
  nic::QpHandle* device_dcis = nullptr;
  DcSlotRoute* device_routes = nullptr;
  Span* spans = nullptr;
  cudaStream_t stream = nullptr;
  ~DcRig() {
    for (auto& n : nics) n->stop();
    dcis.clear();  // before the DCTs: a DCT that goes pauses every NIC that still has DCIs
    dcts.clear();
    cudaFree(device_dcis);
    cudaFree(device_routes);
    cudaFree(spans);
    if (stream) cudaStreamDestroy(stream);
  }
};

std::unique_ptr<DcRig> make_dc_rig(const Config& c, uint32_t connections) {
  auto rig = std::make_unique<DcRig>();
  const uint32_t far = std::min(c.peers, connections);
  const uint32_t per_far = (connections + far - 1) / far;  // DCTs on one target NIC, at most
  for (uint32_t i = 0; i <= far; ++i) {
    softnic::SoftNicOptions o = softnic::gpu_engine_options();
    o.device = c.device;
    // Only A's engine runs: the DCIs' engine executes each write into the target's memory.
    o.engine_ctas = i == 0 ? c.engine_ctas : 1;
    o.engine_warps_per_cta = c.engine_warps;
    o.profile = softnic::timing_profile(c.nic_profile);
    o.max_qps = i == 0 ? c.dcis : 1;
    o.max_dcts = i == 0 ? 1 : per_far;
    o.max_mrs = 4;
    o.start_engine = false;
    rig->nics.push_back(std::make_unique<softnic::SoftNic>(o));
    rig->pds.push_back(rig->nics.back()->create_pd());
    const size_t bytes = i == 0 ? 8 : size_t{per_far} * c.dcis * SLOTS * 8;
    rig->buffers.push_back(static_cast<uint8_t*>(rig->nics.back()->allocate(bytes, nic::Placement::gpu)));
    rig->mrs.push_back(rig->pds.back()->register_memory(rig->buffers.back(), bytes, nic::ACCESS_ALL));
  }
  for (uint32_t j = 0; j < connections; ++j) {
    const uint32_t to = 1 + j % far;
    nic::DctAttributes a;
    a.dc_key = 0xdc000000ull + j;
    rig->dcts.push_back(rig->pds[to]->create_dct(a));
    const nic::DctEndpoint e = rig->dcts.back()->endpoint();
    uint8_t* base = rig->buffers[to] + size_t{j / far} * c.dcis * SLOTS * 8;
    rig->routes.push_back(DcSlotRoute{gda::dc_destination(e.dctn, e.dc_key, e.lid), base, rig->mrs[to].rkey});
  }
  nic::QpAttributes a;
  a.sq_wqebbs = ACTIVE_SQ;
  a.max_inline = 8;
  a.placement = nic::Placement::gpu;
  std::vector<nic::QpHandle> handles;
  for (uint32_t k = 0; k < c.dcis; ++k) {
    rig->dcis.push_back(rig->pds[0]->create_dci(a));
    handles.push_back(rig->dcis.back()->handle());
  }
  cudaSetDevice(c.device);
  check_cuda(cudaStreamCreateWithFlags(&rig->stream, cudaStreamNonBlocking), "connection scaling dc: stream");
  check_cuda(cudaMalloc(&rig->device_dcis, sizeof(nic::QpHandle) * handles.size()), "dc: DCI handles");
  check_cuda(cudaMemcpy(rig->device_dcis, handles.data(), sizeof(nic::QpHandle) * handles.size(),
                        cudaMemcpyHostToDevice), "dc: DCI handles");
  check_cuda(cudaMalloc(&rig->device_routes, sizeof(DcSlotRoute) * rig->routes.size()), "dc: routes");
  check_cuda(cudaMemcpy(rig->device_routes, rig->routes.data(), sizeof(DcSlotRoute) * rig->routes.size(),
                        cudaMemcpyHostToDevice), "dc: routes");
  check_cuda(cudaMalloc(&rig->spans, sizeof(Span) * c.dcis), "dc: spans");
  return rig;
}

// Visits per DCI: two full cycles over the destinations at least (every DCI-DCT pair twice, the
// first cycle paying the cold misses), and at least `messages` writes in all.
uint32_t dc_visits(const Config& c, uint32_t connections, uint32_t visit) {
  const uint64_t per_cycle = uint64_t{c.dcis} * visit;
  return static_cast<uint32_t>(std::max<uint64_t>(2ull * connections, (c.messages + per_cycle - 1) / per_cycle));
}

// Every DCI-DCT pair's last visit left its last SLOTS writes in the pair's slots.
bool dc_payload_valid(DcRig& rig, const Config& c, uint32_t connections, uint32_t visits, uint32_t visit) {
  const uint32_t far = std::min(c.peers, connections);
  bool valid = true;
  for (uint32_t to = 1; to <= far; ++to) {
    const size_t bytes = size_t{(connections + far - 1) / far} * c.dcis * SLOTS * 8;
    std::vector<uint64_t> got(bytes / 8);
    check_cuda(cudaMemcpyAsync(got.data(), rig.buffers[to], bytes, cudaMemcpyDeviceToHost, rig.stream),
               "dc payload check");
    check_cuda(cudaStreamSynchronize(rig.stream), "dc payload check");
    for (uint32_t j = to - 1; j < connections; j += far) {
      for (uint32_t t = 0; t < c.dcis; ++t) {
        const uint32_t first = (j + connections - t % connections) % connections;  // (t + v) % N == j
        const uint64_t last = first + uint64_t{connections} * ((visits - 1 - first) / connections);
        for (uint32_t w = visit - std::min(visit, SLOTS); w < visit; ++w) {
          const size_t at = ((size_t{j / far} * c.dcis + t) * SLOTS + w % SLOTS);
          valid = valid && got[at] == value_of(last * visit + w, t);
        }
      }
    }
  }
  return valid;
}

std::string dc_connect_provenance(const softnic::TimingProfile& p) {
  const std::string name = softnic::profile_name(p);
  std::string s = std::to_string(p.dc_connect_ns) + " ns (" + name;
  if (p.enabled == 0) return s + ": adds nothing)";
  if (name == "cx7-ib") {
    return s + ": FITTED to the paper's 0.45 us DC-RC put+completion difference (§4.3.3), not predicted; "
               "the burst and switch behaviour is the connect rule's prediction)";
  }
  return s + " profile file)";
}

Result measure_dc(const Config& c, uint32_t connections, uint32_t visit) {
  const softnic::TimingProfile profile = softnic::timing_profile(c.nic_profile);
  const uint32_t far = std::min(c.peers, connections);
  Result r;
  r.experiment = "gpu-connection-scaling";
  r.label = "dc send, " + std::to_string(connections) + " destinations, " + std::to_string(c.dcis) + " DCIs, " +
            std::to_string(visit) + "-write bursts";
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = "gpu-thread";
  r.pe_layout = std::to_string(far + 1) + " NICs, 1 GPU (NIC A's DCIs and " + std::to_string(far) + " NICs of DCTs)";
  const DcPrediction predicted = model_rate_dc(profile, connections, c.dcis, visit, c);
  char pipes[48], engine[48];
  std::snprintf(pipes, sizeof pipes, "%.1f", predicted.pipes);
  std::snprintf(engine, sizeof engine, "%.1f", predicted.engine);
  r.knobs = {{"figure", "10b"},
             {"direction", "send"},
             {"transport", "dc"},
             {"connections", std::to_string(connections)},
             {"dcis", std::to_string(c.dcis)},
             {"dci_destination_pairs", std::to_string(uint64_t{c.dcis} * connections)},
             {"writes_per_visit", std::to_string(visit)},
             {"dc_av", "compact"},
             {"payload_bytes", "8"},
             {"inline", "yes"},
             {"far_nics", std::to_string(far)},
             {"submitter_threads", std::to_string(c.dcis) + " (one per DCI)"},
             {"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " + std::to_string(c.engine_warps) +
                                  " warps on A (the DCTs' NICs' engines do not run)"},
             {"nic_profile", softnic::profile_name(profile)},
             {"qp_cache_entries", std::to_string(profile.qp_cache_entries)},
             {"scheduling_quantum_wqes", quantum_knob(profile)},
             {"dc_connect_ns", dc_connect_provenance(profile)},
             {"model_pipes_mmsgs", std::string(pipes) + " (connection-state model: DCI contexts at A, "
                                                        "DCI-DCT responder contexts at the targets, the pipes)"},
             {"model_dc_engine_mmsgs", std::string(engine) + " (softnic's DC batches: up to " +
                                           std::to_string(DC_ENGINE_BATCH) + " writes a modelled doorbell-to-CQE "
                                           "wait in the DCI's engine warp, one connect a visit)"},
             {"model", softnic::connection_model(profile)
                           ? std::string("connection-state model of the softnic, calibrated to the paper's Figure 10a "
                                         "(P-H100) in profile '") + profile.name + "', not a ConnectX; DC adds the DC "
                                         "connect rule (dc_timing.h)"
                           : std::string("none: profile '") + profile.name + "' has no connection-state model"}};
  Metric rate{"message rate", "Mmsg/s", {}}, misses{"A misses per message", "misses", {}};
  Metric waiting{"submitters waiting for the model", "%", {}};
  Metric target_misses{"target misses per message", "misses", {}};
  Metric connects{"DC connects per visit", "connects", {}}, ceiling{"model ceiling", "Mmsg/s", {}};
  bool valid = true, connects_ok = true;
  for (uint32_t run = 0; run < c.runs; ++run) {
    auto rig = make_dc_rig(c, connections);
    const uint32_t visits = dc_visits(c, connections, visit);
    softnic::reserve_local_memory(8192);
    softnic::preload_kernel(reinterpret_cast<const void*>(&dc_submit_kernel), "connection scaling DCI submitters");
    rig->nics[0]->start();
    const uint32_t block = 64;
    dc_submit_kernel<<<(c.dcis + block - 1) / block, block, 0, rig->stream>>>(
        rig->device_dcis, c.dcis, rig->device_routes, connections, visits, visit, rig->spans);
    check_cuda(cudaGetLastError(), "dc_submit_kernel");
    gpu::wait_for_stream(rig->stream, "connection scaling DCI submitters", 600,
                         [&] { return rig->nics[0]->describe_status(); });
    std::vector<Span> spans(c.dcis);
    check_cuda(cudaMemcpyAsync(spans.data(), rig->spans, sizeof(Span) * spans.size(), cudaMemcpyDeviceToHost,
                               rig->stream), "dc spans");
    check_cuda(cudaStreamSynchronize(rig->stream), "dc spans");
    const softnic::ContextCacheCounters a = rig->nics[0]->context_cache_counters();
    rig->nics[0]->stop();
    uint64_t received_misses = 0, accepted = 0;
    for (uint32_t i = 1; i < rig->nics.size(); ++i) received_misses += rig->nics[i]->context_cache_counters().receive_misses;
    for (uint32_t j = 0; j < connections; ++j) {
      accepted += rig->nics[1 + j % far]->dct_context(rig->dcts[j]->endpoint().dctn).connects;
    }
    unsigned long long start = ~0ull, end = 0;
    for (const Span& s : spans) {
      valid = valid && s.status == 0;
      start = std::min(start, s.start);
      end = std::max(end, s.end);
    }
    const double messages = double(c.dcis) * visits * visit, total_visits = double(c.dcis) * visits;
    rate.runs.push_back(summarize({end > start ? messages / double(end - start) * 1e3 : 0}));
    waiting.runs.push_back(summarize({100 * waiting_share(spans)}));
    valid = valid && dc_payload_valid(*rig, c, connections, visits, visit);
    misses.runs.push_back(summarize({double(a.send_misses) / messages}));
    target_misses.runs.push_back(summarize({double(received_misses) / messages}));
    connects.runs.push_back(summarize({double(accepted) / total_visits}));
    // The connect rule's check: every visit to a new destination connects once (more when the
    // DCI ran idle inside a burst); fast connects never.
    const bool expect = profile.enabled != 0 && connections > 1;
    if (expect ? accepted < total_visits : accepted != 0) {
      std::fprintf(stderr, "gpu-connection-scaling dc, %u destinations: %llu DC connects over %.0f visits (%s)\n",
                   connections, static_cast<unsigned long long>(accepted), total_visits,
                   expect ? "the connect rule gives at least one a visit" : "this profile connects never");
      connects_ok = false;
    }
    if (predicted.ceiling() > 0) ceiling.runs.push_back(summarize({predicted.ceiling()}));
  }
  if (predicted.ceiling() > 0 && !rate.runs.empty()) {
    const double share = rate.p50() / predicted.ceiling();
    const bool engine_binds = predicted.engine > 0 && (predicted.pipes == 0 || predicted.engine < predicted.pipes);
    const std::string note = bottleneck_note(
        share, waiting.p50() / 100,
        engine_binds ? "softnic's DC batches, one modelled wait each in the engine warp (a model artefact, not a NIC's)"
                     : "connection-state model");
    r.knobs.push_back({"bottleneck", note});
  }
  r.knobs.push_back({"dc_connect_check", connects_ok ? "pass" : "FAIL"});
  r.metrics = {rate, waiting, misses, target_misses, connects};
  if (!ceiling.runs.empty()) r.metrics.push_back(ceiling);
  r.payload_validated = valid && connects_ok;
  return r;
}

// Figure 10b's rows (--transport with dc): per connection count, RC through the Figure 10a rig
// (one RC QP a connection, `visit`-write visits) and DC through the DCI rig, send only.
int run_figure_10b(const Config& c, const std::vector<std::string>& transports, Report& report) {
  const bool rc = std::find(transports.begin(), transports.end(), "rc") != transports.end();
  Progress progress("gpu-connection-scaling", c.visits.size() * c.qps.size() * (rc ? c.directions.size() + 1 : 1));
  int status = 0;
  auto add = [&](Result r) {
    if (!r.payload_validated) status = 1;
    progress.done(r.label);
    report.add(std::move(r));
  };
  for (uint32_t visit : c.visits) {
    for (uint32_t q : c.qps) {
      for (const std::string& d : c.directions) {
        if (!rc) break;
        Result r = measure(c, d, q, visit);
        r.knobs.insert(r.knobs.begin(), {{"figure", "10b"}, {"connections", std::to_string(q)}});
        add(std::move(r));
      }
      add(measure_dc(c, q, visit));
    }
  }
  return status;
}

int run_gpu_connection_scaling(const Arguments& args, Report& report) {
  args.provider({"softnic"});
  Config c;
  const bool quick = args.flag("quick", "QPs 64, 1024 and 8192, 32 writes per visit, one run (with dc: 64, 1984, "
                                        "2976 connections, 256-write bursts)");
  c.device = static_cast<int>(args.integer("device", 0, 0, 64, flag_help::DEVICE));
  const std::vector<std::string> transports =
      args.choices("transport", "rc", {"rc", "dc"},
                   "rc: Figure 10a (QPs per direction); with dc: Figure 10b, RC QPs vs A's DCIs to that many DCTs, "
                   "rate against connections per NIC, 256-write bursts, send only");
  const bool dc = std::find(transports.begin(), transports.end(), "dc") != transports.end();
  std::vector<uint64_t> qps(c.qps.begin(), c.qps.end());
  if (dc) qps = {64, 512, 1024, 1984, 2976, 4096};
  if (quick) qps = dc ? std::vector<uint64_t>{64, 1984, 2976} : std::vector<uint64_t>{64, 1024, 8192};
  qps = args.integers("qps", qps, 1, 32768,
                      "active QPs per direction of NIC A, a comma list (Figure 10a's x axis; 32,768 at most); "
                      "with dc: connections per NIC (RC QPs, or DCTs each DCI visits), default 64,512,1024,1984,2976,4096");
  c.qps.assign(qps.begin(), qps.end());
  c.directions = args.choices("direction", dc ? "send" : "send,receive,both", {"send", "receive", "both"},
                              "send: A writes to its peers; receive: senders write to A; both: at once (simultaneous); "
                              "with dc it chooses the RC rows only (the DC rig sends)");
  std::vector<uint64_t> visits = dc ? std::vector<uint64_t>{256}
                                    : quick ? std::vector<uint64_t>{32} : std::vector<uint64_t>{32, 8192};
  visits = args.integers("visit", visits, 1, 1u << 20,
                         "writes per connection visit, a comma list (Figure 10a: 32, and 8,192 for long reuse; "
                         "Figure 10b: 256-write bursts)");
  c.visits.assign(visits.begin(), visits.end());
  c.nic_profile = args.text("nic-profile", "cx7-ib",
                            std::string(flag_help::NIC_PROFILE) +
                                "; default cx7-ib here: fast has no connection-state model, so QP count would cost nothing but the engine's time");
  softnic::timing_profile(c.nic_profile);
  c.peers = static_cast<uint32_t>(args.integer("peers", c.peers, 1, 64, "NICs A sends to (send, both): the paper's 8 PEs, one sender and 7 targets"));
  c.senders = static_cast<uint32_t>(args.integer("senders", c.senders, 1, 64, "NICs that send to A (receive): the paper's receive-only curve declines sooner with more"));
  c.submitters = static_cast<uint32_t>(args.integer("submitters", c.submitters, 1, 4096, "GPU threads per direction, each cycling its QPs (a fixed grid, as the paper's)"));
  c.messages = args.integer("messages", c.messages, 1024, 1ull << 32, "writes per direction per run, at least (every QP gets at least two visits)");
  c.engine_ctas = static_cast<uint32_t>(args.integer("engine-ctas", c.engine_ctas, 1, 1024, "CTAs of NIC A's engine kernel (one per SM)"));
  c.peer_engine_ctas = static_cast<uint32_t>(args.integer("peer-engine-ctas", c.peer_engine_ctas, 1, 1024, "CTAs of each peer's engine kernel (send, both; receive's senders take --engine-ctas)"));
  c.engine_warps = static_cast<uint32_t>(args.integer("engine-warps", c.engine_warps, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
  c.dcis = static_cast<uint32_t>(args.integer("dcis", c.dcis, 1, 1024,
                                              "with dc: NIC A's DCIs, one submitter thread each, every one visiting every DCT"));
  c.runs = static_cast<uint32_t>(args.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  args.check_all_used();
  if (!dc && args.given("dcis")) {
    throw InvalidArgument("--dcis " + std::to_string(c.dcis) + ": DCIs are Figure 10b's DC rows; add --transport dc");
  }
  const bool rc = std::find(transports.begin(), transports.end(), "rc") != transports.end();
  for (const char* flag : {"direction", "submitters", "senders", "peer-engine-ctas"}) {
    if (dc && !rc && args.given(flag)) {
      throw InvalidArgument(std::string("--") + flag + ": a knob of the RC rig; --transport dc alone runs only the "
                            "DC rows (--transport rc,dc for both)");
    }
  }
  if (skip_without_cuda_device()) return 0;
  if (dc) return run_figure_10b(c, transports, report);
  Progress progress("gpu-connection-scaling", c.directions.size() * c.qps.size() * c.visits.size());
  int status = 0;
  for (const std::string& d : c.directions) {
    for (uint32_t visit : c.visits) {
      for (uint32_t q : c.qps) {
        Result r = measure(c, d, q, visit);
        if (!r.payload_validated) status = 1;
        progress.done(r.label);
        report.add(std::move(r));
      }
    }
  }
  return status;
}

const bool registered = register_experiment(
    {"gpu-connection-scaling",
     "Figure 10a on the softnic's connection-state model: 8 B rate against active QPs per direction, send / receive / both, 32 or 8,192 writes per visit; --transport rc,dc: Figure 10b, RC vs DC 256-write bursts against connections per NIC",
     run_gpu_connection_scaling, false});

}  // namespace
}  // namespace dissect::bench
