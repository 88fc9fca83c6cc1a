// Private: the softnic's protection domain and queue pair objects.
#pragma once

#include <memory>

#include "dissect/softnic/softnic.h"
#include "dissect/telemetry/counters.h"

namespace dissect::softnic {

// One allocation per QP holds every queue the submitter and the engine share, each at a 64 B
// boundary: send ring, send CQ, receive ring, receive CQ, doorbell record, doorbell register,
// submitter state.
struct QueueMemory {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  mlx5::mlx5_cqe64* send_cqes = nullptr;
  mlx5::mlx5_cqe64* recv_cqes = nullptr;
  mlx5::mlx5_wqe_data_seg* rq = nullptr;
  mlx5::mlx5_qp_dbrec* dbrec = nullptr;
  uint64_t* doorbell = nullptr;
  nic::SendQueueState* state = nullptr;
  uint64_t* recv_head = nullptr;
  uint64_t* recv_cq_ci = nullptr;
  uint64_t* post_stamps = nullptr;  // one per send WQEBB, for telemetry's completion latency
};

class SoftQueuePair : public nic::QueuePair {
 public:
  SoftQueuePair(SoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes);
  ~SoftQueuePair() override;

  uint32_t qpn() const override { return qpn_; }
  nic::QpHandle handle() const override;
  nic::RecvQueueHandle recv_handle() const override;
  nic::QpEndpoint endpoint() const override;
  void connect(const nic::QpEndpoint& remote) override;

 private:
  SoftNic& nic_;
  nic::QpAttributes attributes_;
  uint32_t index_;
  uint32_t qpn_;
  QueueMemory memory_;
  telemetry::QpCounters* telemetry_ = nullptr;
};

class SoftProtectionDomain : public nic::ProtectionDomain {
 public:
  SoftProtectionDomain(SoftNic& nic, uint32_t pd) : nic_(nic), pd_(pd) {}
  nic::MemoryRegion register_memory(void* address, size_t length, uint32_t access) override;
  void deregister_memory(const nic::MemoryRegion& region) override;
  std::unique_ptr<nic::QueuePair> create_qp(const nic::QpAttributes& attributes) override;

 private:
  SoftNic& nic_;
  uint32_t pd_;
};

}  // namespace dissect::softnic
