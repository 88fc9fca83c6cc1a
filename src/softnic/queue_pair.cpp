#include "queue_pair.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "dissect/nic/observer.h"
#include "dissect/softnic/gpu_engine.h"
#include "completion_queue.h"
#include "memory_registration.h"
#include "table_memory.h"

namespace dissect::softnic {

namespace {

// A DCI's attributes: those of any QP, no receive queue, and inline payloads that fit beside the
// full 48 B address vector.
nic::QpAttributes checked_dci_attributes(const nic::QpAttributes& a) {
  if (a.rq_wqes != 0) {
    throw InvalidArgument("create_dci: rq_wqes = " + std::to_string(a.rq_wqes) +
                          ": a DCI has no receive queue (rq_wqes must be 0)");
  }
  if (a.max_inline > mlx5::DC_MAX_INLINE_BY_DS) {
    throw InvalidArgument("create_dci: max_inline = " + std::to_string(a.max_inline) +
                          " bytes does not fit a DC WQE with the full address vector (limit " +
                          std::to_string(mlx5::DC_MAX_INLINE_BY_DS) + ")");
  }
  return a;
}

// The shared CQ `a` names, checked against this NIC and the QP's other attributes; null when the
// QP has a CQ of its own.
SoftCompletionQueue* checked_shared_cq(const SoftNic& nic, const nic::QpAttributes& a) {
  if (a.send_cq == nullptr) return nullptr;
  auto* cq = dynamic_cast<SoftCompletionQueue*>(a.send_cq);
  const std::string me = "create_qp on softnic " + std::to_string(nic.nic_id()) + ": send_cq";
  if (cq == nullptr) throw InvalidArgument(me + " is not a softnic CQ");
  if (&cq->nic() != &nic) {
    throw InvalidArgument(me + " " + hex(cq->cqn()) + " belongs to softnic " +
                          std::to_string(cq->nic().nic_id()) + " (a CQ serves QPs of its own NIC)");
  }
  if (a.cq_entries != 0 || a.send_cq_collapsed) {
    throw InvalidArgument(me + " " + hex(cq->cqn()) + " is shared: cq_entries (" +
                          std::to_string(a.cq_entries) + ") must be 0 and send_cq_collapsed false");
  }
  cq->check_room(a.sq_wqebbs);
  return cq;
}

}  // namespace

SoftQueuePair::SoftQueuePair(SoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes,
                             QpTransport transport)
    : nic_(nic),
      attributes_(checked_queue_attributes(
          transport == QP_TRANSPORT_DCI ? checked_dci_attributes(attributes) : attributes)),
      transport_(transport),
      shared_cq_(checked_shared_cq(nic, attributes)) {
  const nic::QpAttributes& a = attributes_;
  if (nic_.engine() == EngineKind::host_thread && a.placement == nic::Placement::gpu) {
    throw InvalidArgument("softnic host-thread engine: queue placement 'gpu' needs the GPU engine");
  }
  // GPU submitters' post stamps live in their telemetry slot (GPU memory).
  memory_ = allocate_queue_memory(nic_, a, nic_.device() >= 0 ? PostStamps::elsewhere
                                                              : PostStamps::in_queue_memory);
  doorbell_ = route_doorbell(nic_, a, memory_);  // mapped host memory (allocate, Placement::host)
  // The initial bytes, built here and written where the queues are (in place, or uploaded).
  std::vector<uint8_t> image(memory_.bytes, 0);
  mark_cqes_invalid(memory_, a, image.data());
  nic_.memory_->write(memory_.base, image.data(), memory_.bytes);
  index_ = nic_.allocate_qp_slot();
  qpn_ = QPN_BASE + index_;
  QpContext context = make_queue_context(memory_, a, qpn_, pd);
  context.transport = transport_;
  // Host-resident queues are rung by host threads or over PCIe, and their CQ is observed there.
  if (a.placement == nic::Placement::host) {
    context.engine_flags = ENGINE_QUEUES_IN_HOST_MEMORY | ENGINE_SYSTEM_COMPLETION;
  }
  // A cpu-assisted doorbell is stored by the forwarder, a host thread, into mapped host memory:
  // only a system-scope acquire of it synchronises with that release store and so carries the
  // submitter's WQE stores (doorbell_forwarder.h, steps 1-3). The <system, system> window is the
  // one instantiation with a system-scope doorbell; its system-scope CQE release is stronger
  // than a GPU-resident CQ needs, and a fourth instantiation would not fit the engine kernel's
  // registers (gpu_engine.h).
  if (doorbell_.memory != nullptr) context.engine_flags |= ENGINE_QUEUES_IN_HOST_MEMORY;
  // A shared CQ: its ring and the engine's counter; a host-resident one is observed from the host.
  if (shared_cq_ != nullptr) {
    context.send_cq = shared_cq_->engine_context();
    if (shared_cq_->placement() == nic::Placement::host) context.engine_flags |= ENGINE_SYSTEM_COMPLETION;
  }
  // A DCI has nothing to connect: ready to send at once (RESET -> INIT -> RTR -> RTS, no peer).
  if (transport_ == QP_TRANSPORT_DCI) {
    nic_.has_dci_.store(true, std::memory_order_release);
    context.state = QP_STATE_RTS;
  }
  nic_.write_qp(index_, context);
  if (doorbell_.memory != nullptr) {
    nic_.doorbell_forwarder().add(qpn_, doorbell_.mailbox, doorbell_.engine_register);
  }
  open_telemetry();
  if (shared_cq_ != nullptr) shared_cq_->join(handle(), a.sq_wqebbs);
}

// Resolved once here; the data path only follows the pointer (null when telemetry is off). GPU
// submitters count in GPU memory (gpu_slot.h), host submitters in the observer's host slot.
void SoftQueuePair::open_telemetry() {
  const uint32_t channel = attributes_.telemetry_channel >= 0 ? attributes_.telemetry_channel : 0;
  if (nic_.device() >= 0) {
    gpu_telemetry_.open(nic_, "softnic-gpu" + std::to_string(nic_.nic_id()), nic_.device(),
                        attributes_.telemetry_channel, qpn_, attributes_.sq_wqebbs);
    return;
  }
  nic::Observer* observer = nic::observer();
  telemetry_ = observer != nullptr ? observer->track_qp(nic_.telemetry_device(), channel, qpn_) : nullptr;
}

SoftQueuePair::~SoftQueuePair() {
  // RESET first: an engine that starts a WQE after this sees a responder that does not answer
  // (and skips this QP's own send queue). Engines already inside a WQE aimed at this QP, or inside
  // service_qp for it, may still touch its queues: each is stopped (and so finished) before they
  // are freed, this NIC's own engine included.
  // The forwarder lets go of the doorbell words first (remove() returns once its thread cannot
  // touch them); the engine, which reads the register, is stopped around their free.
  try {
    nic_.publish_qp_state(index_, QP_STATE_RESET);
    if (doorbell_.memory != nullptr) forget_forwarded_doorbell();
    SoftNic::disconnect_peers_of(nic_.engine_tables(), index_);
    const bool was_running = nic_.pause_engine();
    if (shared_cq_ != nullptr) shared_cq_->leave(qpn_);  // its engine writes no CQE for it now
    nic_.release(memory_.base);
    if (doorbell_.memory != nullptr) nic_.release(doorbell_.memory);
    nic_.resume_engine(was_running);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: softnic %u: destroying QP 0x%x: %s\n", nic_.nic_id(), qpn_, e.what());
  }
}

// A destructor must not throw; a forwarder that lost the QP is a bug worth a line, not a crash.
void SoftQueuePair::forget_forwarded_doorbell() {
  try {
    nic_.doorbell_forwarder().remove(qpn_);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect: softnic %u: destroying QP 0x%x: %s\n", nic_.nic_id(), qpn_,
                 e.what());
  }
}

nic::QpHandle SoftQueuePair::handle() const {
  nic::QpHandle h =
      nic_.device() >= 0
          ? make_send_handle(memory_, attributes_, qpn_, gpu_telemetry_.counters(),
                             gpu_telemetry_.post_stamps(), gpu_telemetry_.sample_mask())
          : make_send_handle(memory_, attributes_, qpn_, telemetry_, memory_.post_stamps,
                             telemetry_ != nullptr ? telemetry_->sample_mask : 0);
  if (shared_cq_ != nullptr) h.send_cq = shared_cq_->handle();
  return h;
}

nic::RecvQueueHandle SoftQueuePair::recv_handle() const {
  return make_recv_handle(memory_, attributes_, qpn_);
}

nic::QpEndpoint SoftQueuePair::endpoint() const {
  nic::QpEndpoint e;
  e.qpn = qpn_;
  e.nic_id = nic_.nic_id();
  return e;
}

void SoftQueuePair::connect(const nic::QpEndpoint& remote) {
  if (transport_ == QP_TRANSPORT_DCI) {
    throw InvalidArgument("connect qpn " + hex(qpn_) + ": a DCI is not connected (each WQE names "
                          "its DCT in its address vector: gda::put_dc)");
  }
  if (const SoftNic::Import* peer = nic_.find_import(remote.nic_id)) {
    connect_to_process(*peer, remote.qpn);
    return;
  }
  SoftNic& remote_nic = SoftNic::find(remote.nic_id);
  const uint32_t remote_index = remote.qpn - QPN_BASE;
  const std::string me = "connect qpn " + hex(qpn_) + ": softnic " + std::to_string(remote.nic_id);
  if (remote.qpn < QPN_BASE || remote_index >= remote_nic.qp_count_) {
    throw InvalidArgument(me + " has no QP " + hex(remote.qpn));
  }
  const bool gpu_engine = nic_.engine() == EngineKind::gpu_kernel;
  if (!gpu_engine && !remote_nic.memory_->host_reachable()) {
    throw InvalidArgument(me + " keeps its tables in " + remote_nic.table_memory() +
                          ", which this NIC's host-thread engine cannot reach");
  }
  if (gpu_engine && !remote_nic.memory_->gpu_reachable()) {
    throw InvalidArgument(me + " keeps its tables in " + remote_nic.table_memory() +
                          ", which this NIC's GPU engine cannot reach (give it SoftNicOptions::device)");
  }
  const bool other_device = remote_nic.device() != nic_.device();
  if (gpu_engine && other_device && remote_nic.engine() == EngineKind::gpu_kernel &&
      !enable_peer_access(nic_.device(), remote_nic.device())) {
    throw Error(me + ": devices " + std::to_string(nic_.device()) + " and " +
                std::to_string(remote_nic.device()) + " have no peer access");
  }
  // A responder on another GPU observes its payloads there: the CQE's release must cover it.
  const uint32_t flags = nic_.shadow_qps_[index_].engine_flags | (other_device ? ENGINE_SYSTEM_COMPLETION : 0);
  nic_.connect_qp(index_, remote_nic.engine_tables(), RemoteWindow{}, remote_index, flags);
}

// The peer's tables and QPs are reached through its imported arena (softnic/ipc.h).
void SoftQueuePair::connect_to_process(const SoftNic::Import& peer, uint32_t remote_qpn) {
  if (remote_qpn < QPN_BASE || remote_qpn - QPN_BASE >= peer.tables.qp_count) {
    throw InvalidArgument("connect qpn " + hex(qpn_) + ": softnic " + std::to_string(peer.peer.nic_id) +
                          " of process " + std::to_string(peer.peer.pid) + " had no QP " + hex(remote_qpn) +
                          " when imported (" + std::to_string(peer.tables.qp_count) +
                          " QPs): import after the peer created its QPs");
  }
  // The responder is another process's GPU.
  const uint32_t flags = nic_.shadow_qps_[index_].engine_flags | ENGINE_SYSTEM_COMPLETION;
  nic_.connect_qp(index_, reinterpret_cast<NicTables*>(peer.peer.tables), peer.window,
                  remote_qpn - QPN_BASE, flags);
}

nic::MemoryRegion SoftProtectionDomain::register_memory(void* address, size_t length,
                                                        uint32_t access) {
  const MrEntry entry = make_mr_entry(address, length, access, pd_, [this] {
    return MrSlot{nic_.allocate_mr_slot(), ++nic_.mr_tag_};
  });
  MrEntry published = entry;
  if (nic_.memory_->in_host_memory(address)) published.access |= MR_IN_HOST_MEMORY;
  nic_.write_mr(mr_index(entry.key), published);
  return memory_region(entry);
}

void SoftProtectionDomain::deregister_memory(const nic::MemoryRegion& region) {
  const uint32_t index = mr_index(region.lkey);
  const MrEntry* entry = nic_.shadow_mr(index);
  if (entry == nullptr || entry->key != region.lkey) {
    throw InvalidArgument("deregister_memory: unknown lkey " + hex(region.lkey));
  }
  nic_.invalidate_mr(index);
}

std::unique_ptr<nic::QueuePair> SoftProtectionDomain::create_qp(
    const nic::QpAttributes& attributes) {
  return std::make_unique<SoftQueuePair>(nic_, pd_, attributes);
}

SoftDcTarget::SoftDcTarget(SoftNic& nic, uint32_t pd, const nic::DctAttributes& attributes)
    : nic_(nic), dc_key_(attributes.dc_key) {
  if (lid_of_nic(nic_.nic_id()) >= MAX_FABRIC_LIDS || nic_.nic_id() + 1 >= MAX_FABRIC_LIDS) {
    throw Error("create_dct: softnic " + std::to_string(nic_.nic_id()) +
                " has no LID on the fabric (unicast LIDs end at " + hex(MAX_FABRIC_LIDS - 1) + ")");
  }
  index_ = nic_.add_dct(pd, dc_key_);
  dctn_ = DCTN_BASE + index_;
}

SoftDcTarget::~SoftDcTarget() {
  // Invalid first: a DC WQE that starts after this finds no DCT (REMOTE_INVAL_REQ_ERR). One that
  // already passed the lookup may still be writing: every DCI's engine is stopped around the
  // store, so on return none is, and the PD's memory may go.
  nic_.invalidate_dct(index_);
  SoftNic::quiesce_dc_initiators();
}

nic::DctEndpoint SoftDcTarget::endpoint() const {
  nic::DctEndpoint e;
  e.dctn = dctn_;
  e.dc_key = dc_key_;
  e.nic_id = nic_.nic_id();
  e.lid = lid_of_nic(nic_.nic_id());
  return e;
}

std::unique_ptr<nic::DcTarget> SoftProtectionDomain::create_dct(
    const nic::DctAttributes& attributes) {
  return std::make_unique<SoftDcTarget>(nic_, pd_, attributes);
}

std::unique_ptr<nic::QueuePair> SoftProtectionDomain::create_dci(
    const nic::QpAttributes& attributes) {
  // Both engines serve DC: host engines route through the process's fabric, the GPU engine
  // through its own (SoftNic::open_gpu_fabric), made with its first DCI.
  if (nic_.engine() == EngineKind::gpu_kernel) nic_.open_gpu_fabric();
  return std::make_unique<SoftQueuePair>(nic_, pd_, attributes, QP_TRANSPORT_DCI);
}

}  // namespace dissect::softnic
