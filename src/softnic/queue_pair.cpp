#include "queue_pair.h"

#include <cstring>
#include <string>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "dissect/telemetry/session.h"

namespace dissect::softnic {
namespace {

size_t align64(size_t bytes) { return (bytes + 63) & ~size_t{63}; }

void fill_invalid_cqes(mlx5::mlx5_cqe64* cqes, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) cqes[i].op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
}

void check_attributes(const nic::QpAttributes& a) {
  nic::check_queue_depth("send queue depth (WQEBBs)", a.sq_wqebbs, mlx5::MLX5_MAX_SQ_WQEBBS);
  const uint32_t cq = a.cq_entries ? a.cq_entries : a.sq_wqebbs;
  nic::check_queue_depth("send CQ depth", cq, 1u << 22);
  if (cq < a.sq_wqebbs) {
    throw InvalidArgument("send CQ depth " + std::to_string(cq) + " is below the send queue depth " +
                          std::to_string(a.sq_wqebbs) + ": the CQ could overrun");
  }
  if (a.rq_wqes != 0) nic::check_queue_depth("receive queue depth", a.rq_wqes, 1u << 15);
  if (a.max_inline > mlx5::RC_MAX_INLINE_BY_DS ||
      mlx5::wqebbs_for_ds(mlx5::rc_write_inline_ds(a.max_inline)) > a.sq_wqebbs) {
    throw InvalidArgument("max_inline = " + std::to_string(a.max_inline) +
                          " bytes does not fit one WQE of a " + std::to_string(a.sq_wqebbs) +
                          "-WQEBB send queue (limit " +
                          std::to_string(mlx5::RC_MAX_INLINE_BY_DS) + ")");
  }
}

QueueMemory carve(SoftNic& nic, const nic::QpAttributes& a) {
  const uint32_t cq = a.cq_entries ? a.cq_entries : a.sq_wqebbs;
  const uint32_t rq_cq = a.rq_wqes ? a.rq_wqes : 1;
  const size_t sq_bytes = size_t{a.sq_wqebbs} * mlx5::MLX5_SEND_WQE_BB;
  const size_t cq_bytes = size_t{cq} * mlx5::MLX5_CQE_SIZE;
  const size_t rq_bytes = align64(size_t{a.rq_wqes} * sizeof(mlx5::mlx5_wqe_data_seg));
  const size_t rq_cq_bytes = size_t{rq_cq} * mlx5::MLX5_CQE_SIZE;
  QueueMemory m;
  const size_t stamp_bytes = size_t{a.sq_wqebbs} * sizeof(uint64_t);
  m.bytes = sq_bytes + cq_bytes + rq_bytes + rq_cq_bytes + 5 * 64 + stamp_bytes;
  m.base = static_cast<uint8_t*>(nic.allocate(m.bytes, a.placement));
  uint8_t* p = m.base + sq_bytes;
  m.send_cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(p), p += cq_bytes;
  m.rq = a.rq_wqes ? reinterpret_cast<mlx5::mlx5_wqe_data_seg*>(p) : nullptr, p += rq_bytes;
  m.recv_cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(p), p += rq_cq_bytes;
  m.dbrec = reinterpret_cast<mlx5::mlx5_qp_dbrec*>(p), p += 64;
  m.doorbell = reinterpret_cast<uint64_t*>(p), p += 64;
  m.state = reinterpret_cast<nic::SendQueueState*>(p), p += 64;
  m.recv_head = reinterpret_cast<uint64_t*>(p), p += 64;
  m.recv_cq_ci = reinterpret_cast<uint64_t*>(p), p += 64;
  m.post_stamps = reinterpret_cast<uint64_t*>(p);
  fill_invalid_cqes(m.send_cqes, cq);
  fill_invalid_cqes(m.recv_cqes, rq_cq);
  return m;
}

}  // namespace

SoftQueuePair::SoftQueuePair(SoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes)
    : nic_(nic), attributes_(attributes) {
  check_attributes(attributes_);
  if (attributes_.cq_entries == 0) attributes_.cq_entries = attributes_.sq_wqebbs;
  memory_ = carve(nic_, attributes_);
  index_ = nic_.allocate_qp_slot();
  qpn_ = QPN_BASE + index_;
  QpContext& qp = nic_.qps_[index_];
  qp = QpContext{};
  qp.qpn = qpn_;
  qp.state = QP_STATE_RESET;
  qp.pd = pd;
  qp.sq = mlx5::send_ring{memory_.base, attributes_.sq_wqebbs};
  qp.dbrec = memory_.dbrec;
  qp.doorbell = memory_.doorbell;
  qp.send_cq = CqContext{memory_.send_cqes, attributes_.cq_entries, qpn_, 0};
  qp.rq = memory_.rq;
  qp.rq_wqe_count = attributes_.rq_wqes;
  qp.recv_cq = CqContext{memory_.recv_cqes, attributes_.rq_wqes ? attributes_.rq_wqes : 1,
                         qpn_ | 0x800000, 0};
  // Resolved once here; the data path only follows the pointer (null when telemetry is off).
  const uint32_t channel = attributes_.telemetry_channel >= 0 ? attributes_.telemetry_channel : 0;
  telemetry_ = telemetry::track_qp(nic_.telemetry_device(), channel, qpn_).counters;
}

SoftQueuePair::~SoftQueuePair() {
  store_release<Scope::system>(&nic_.qps_[index_].state, uint32_t{QP_STATE_RESET});
  // The engine may be inside service_qp for this QP; it re-reads state on its next pass. Stopping
  // it here keeps the queue memory alive until it has moved on.
  const bool was_running = nic_.running();
  if (was_running) nic_.stop();
  nic_.release(memory_.base);
  if (was_running) nic_.start();
}

nic::QpHandle SoftQueuePair::handle() const {
  nic::QpHandle h{};
  h.sq = mlx5::send_ring{memory_.base, attributes_.sq_wqebbs};
  h.qpn = qpn_;
  h.max_inline = attributes_.max_inline;
  h.dbrec_send = &memory_.dbrec->send_counter;
  h.doorbell = memory_.doorbell;
  h.state = memory_.state;
  h.send_cq = nic::CqHandle{memory_.send_cqes, attributes_.cq_entries, qpn_, nullptr};
  h.telemetry = telemetry_;
  h.post_stamps = memory_.post_stamps;
  return h;
}

nic::RecvQueueHandle SoftQueuePair::recv_handle() const {
  nic::RecvQueueHandle h{};
  h.rq = memory_.rq;
  h.wqe_count = attributes_.rq_wqes;
  h.dbrec_recv = &memory_.dbrec->rcv_counter;
  h.head = memory_.recv_head;
  h.recv_cq = nic::CqHandle{memory_.recv_cqes, attributes_.rq_wqes ? attributes_.rq_wqes : 1,
                            qpn_ | 0x800000, nullptr};
  h.recv_cq_ci = memory_.recv_cq_ci;
  return h;
}

nic::QpEndpoint SoftQueuePair::endpoint() const {
  nic::QpEndpoint e;
  e.qpn = qpn_;
  e.nic_id = nic_.nic_id();
  return e;
}

void SoftQueuePair::connect(const nic::QpEndpoint& remote) {
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
  if (address == nullptr || length == 0) {
    throw InvalidArgument("register_memory: empty region (address " +
                          hex(reinterpret_cast<uintptr_t>(address)) + ", length " +
                          std::to_string(length) + ")");
  }
  if ((access & ~nic::ACCESS_ALL) != 0) {
    throw InvalidArgument("register_memory: unknown access flags " + hex(access));
  }
  const uint32_t index = nic_.allocate_mr_slot();
  MrEntry& entry = nic_.mrs_[index];
  entry.address = reinterpret_cast<uintptr_t>(address);
  entry.length = length;
  entry.key = (index << 8) | (++nic_.mr_tag_ & 0xff);
  entry.access = access;
  entry.pd = pd_;
  store_release<Scope::system>(&entry.valid, 1u);
  return nic::MemoryRegion{address, length, entry.key, entry.key, access};
}

void SoftProtectionDomain::deregister_memory(const nic::MemoryRegion& region) {
  const uint32_t index = region.lkey >> 8;
  if (index >= nic_.mrs_.size() || nic_.mrs_[index].key != region.lkey) {
    throw InvalidArgument("deregister_memory: unknown lkey " + hex(region.lkey));
  }
  store_release<Scope::system>(&nic_.mrs_[index].valid, 0u);
}

std::unique_ptr<nic::QueuePair> SoftProtectionDomain::create_qp(
    const nic::QpAttributes& attributes) {
  return std::make_unique<SoftQueuePair>(nic_, pd_, attributes);
}

}  // namespace dissect::softnic
