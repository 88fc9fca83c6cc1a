// Private: the softnic's protection domain, queue pair and DC target objects, one implementation
// for every table memory and engine (softnic.h): each writes its contexts through the NIC.
#pragma once

#include <memory>

#include "dissect/softnic/softnic.h"
#include "dissect/nic/qp_counters.h"
#include "doorbell_forwarder.h"
#include "gpu_slot.h"
#include "queue_memory.h"

namespace dissect::softnic {

class SoftCompletionQueue;  // completion_queue.h

class SoftQueuePair : public nic::QueuePair {
 public:
  // `transport`: QP_TRANSPORT_RC (connect() sets its responder) or QP_TRANSPORT_DCI (in RTS at
  // once; each WQE names its DCT).
  SoftQueuePair(SoftNic& nic, uint32_t pd, const nic::QpAttributes& attributes,
                QpTransport transport = QP_TRANSPORT_RC);
  ~SoftQueuePair() override;

  uint32_t qpn() const override { return qpn_; }
  nic::QpHandle handle() const override;
  nic::RecvQueueHandle recv_handle() const override;
  nic::QpEndpoint endpoint() const override;
  void connect(const nic::QpEndpoint& remote) override;

 private:
  void forget_forwarded_doorbell();
  void open_telemetry();
  void connect_to_process(const SoftNic::Import& peer, uint32_t remote_qpn);
  SoftNic& nic_;
  nic::QpAttributes attributes_;
  uint32_t index_;
  uint32_t qpn_;
  QpTransport transport_;
  SoftCompletionQueue* shared_cq_;  // null: the QP's own send CQ
  QueueMemory memory_;
  AssistedDoorbell doorbell_;  // empty unless DoorbellPath::cpu_assisted
  telemetry::QpCounters* telemetry_ = nullptr;  // host submitters' slot (device < 0)
  GpuQpSlot gpu_telemetry_;  // GPU submitters' slot; gathered and freed after the destructor's body
};

// A DC target: one slot of the NIC's DCT table, valid from construction to destruction.
class SoftDcTarget : public nic::DcTarget {
 public:
  SoftDcTarget(SoftNic& nic, uint32_t pd, const nic::DctAttributes& attributes);
  ~SoftDcTarget() override;
  uint32_t dctn() const override { return dctn_; }
  nic::DctEndpoint endpoint() const override;

 private:
  SoftNic& nic_;
  uint32_t index_;
  uint32_t dctn_;
  uint64_t dc_key_;
};

class SoftProtectionDomain : public nic::ProtectionDomain {
 public:
  SoftProtectionDomain(SoftNic& nic, uint32_t pd) : nic_(nic), pd_(pd) {}
  nic::MemoryRegion register_memory(void* address, size_t length, uint32_t access) override;
  void deregister_memory(const nic::MemoryRegion& region) override;
  std::unique_ptr<nic::QueuePair> create_qp(const nic::QpAttributes& attributes) override;
  std::unique_ptr<nic::DcTarget> create_dct(const nic::DctAttributes& attributes) override;
  std::unique_ptr<nic::QueuePair> create_dci(const nic::QpAttributes& attributes) override;

 private:
  SoftNic& nic_;
  uint32_t pd_;
};

}  // namespace dissect::softnic
