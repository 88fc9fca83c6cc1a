#include "queue_pair.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "dissect/nic/observer.h"
#include "memory_registration.h"

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

}  // namespace

SoftQueuePair::SoftQueuePair(SoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes,
                             QpTransport transport)
    : nic_(nic),
      attributes_(checked_queue_attributes(
          transport == QP_TRANSPORT_DCI ? checked_dci_attributes(attributes) : attributes)),
      transport_(transport) {
  memory_ = allocate_queue_memory(nic_, attributes_, PostStamps::in_queue_memory);
  doorbell_ = route_doorbell(nic_, attributes_, memory_);
  mark_cqes_invalid(memory_, attributes_, memory_.base);  // host memory: marked in place
  index_ = nic_.allocate_qp_slot();
  qpn_ = QPN_BASE + index_;
  nic_.qps_[index_] = make_queue_context(memory_, attributes_, qpn_, pd);
  nic_.qps_[index_].transport = transport_;
  if (doorbell_.memory != nullptr) {
    nic_.doorbell_forwarder().add(qpn_, doorbell_.mailbox, doorbell_.engine_register);
  }
  // Resolved once here; the data path only follows the pointer (null when telemetry is off).
  const uint32_t channel = attributes_.telemetry_channel >= 0 ? attributes_.telemetry_channel : 0;
  nic::Observer* observer = nic::observer();
  telemetry_ = observer != nullptr ? observer->track_qp(nic_.telemetry_device(), channel, qpn_) : nullptr;
  if (transport_ == QP_TRANSPORT_DCI) {
    // Nothing to connect: ready to send at once (RESET -> INIT -> RTR -> RTS with no peer).
    nic_.has_dci_.store(true, std::memory_order_release);
    store_release<Scope::system>(&nic_.qps_[index_].state, uint32_t{QP_STATE_RTS});
  }
}

SoftQueuePair::~SoftQueuePair() {
  // RESET first: an engine that starts a WQE after this sees a responder that does not answer
  // (and skips this QP's own send queue). Engines already inside a WQE aimed at this QP, or inside
  // service_qp for it, may still touch its queues: each is stopped (and so finished) before they
  // are freed, this NIC's own engine included.
  // The forwarder lets go of the doorbell words first (remove() returns once its thread cannot
  // touch them); the engine, which reads the register, is stopped around their free.
  store_release<Scope::system>(&nic_.qps_[index_].state, uint32_t{QP_STATE_RESET});
  if (doorbell_.memory != nullptr) forget_forwarded_doorbell();
  SoftNic::disconnect_peers_of(nic_.tables(), index_);
  const bool was_running = nic_.pause_engine();
  nic_.release(memory_.base);
  if (doorbell_.memory != nullptr) nic_.release(doorbell_.memory);
  nic_.resume_engine(was_running);
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
  return make_send_handle(memory_, attributes_, qpn_, telemetry_, memory_.post_stamps,
                          telemetry_ != nullptr ? telemetry_->sample_mask : 0);
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
  SoftNic& remote_nic = SoftNic::find(remote.nic_id);
  const uint32_t remote_index = remote.qpn - QPN_BASE;
  if (remote.qpn < QPN_BASE || remote_index >= remote_nic.tables().qp_count) {
    throw InvalidArgument("connect qpn " + hex(qpn_) + ": softnic " +
                          std::to_string(remote.nic_id) + " has no QP " + hex(remote.qpn));
  }
  QpContext& qp = nic_.qps_[index_];
  qp.remote_nic = &remote_nic.tables();
  qp.remote_qp_index = remote_index;
  store_release<Scope::system>(&qp.state, uint32_t{QP_STATE_RTS});
}

nic::MemoryRegion SoftProtectionDomain::register_memory(void* address, size_t length,
                                                        uint32_t access) {
  const MrEntry entry = make_mr_entry(address, length, access, pd_, [this] {
    return MrSlot{nic_.allocate_mr_slot(), ++nic_.mr_tag_};
  });
  // Every field but `valid` (the last), then `valid` with a release store: the engine acquires it
  // before it reads the rest.
  static_assert(offsetof(MrEntry, valid) + sizeof(uint32_t) == sizeof(MrEntry));
  MrEntry& slot = nic_.mrs_[mr_index(entry.key)];
  std::memcpy(&slot, &entry, offsetof(MrEntry, valid));
  store_release<Scope::system>(&slot.valid, entry.valid);
  return memory_region(entry);
}

void SoftProtectionDomain::deregister_memory(const nic::MemoryRegion& region) {
  const uint32_t index = mr_index(region.lkey);
  if (index >= nic_.mrs_.size() || nic_.mrs_[index].key != region.lkey) {
    throw InvalidArgument("deregister_memory: unknown lkey " + hex(region.lkey));
  }
  store_release<Scope::system>(&nic_.mrs_[index].valid, 0u);
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
  store_release<Scope::system>(&nic_.dcts_[index_].valid, 0u);
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
  return std::make_unique<SoftQueuePair>(nic_, pd_, attributes, QP_TRANSPORT_DCI);
}

}  // namespace dissect::softnic
