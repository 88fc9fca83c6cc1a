// The nic layer: host-side resources of one NIC, whichever provider consumes the queues.
//
// Contract
//  - A `Nic` is opened by provider name ("softnic" everywhere; "mlx5" where rdma-core and a
//    ConnectX exist). Every object below is owned by the caller through unique_ptr and must be
//    destroyed before the Nic that made it.
//  - Queue memory is allocated by the provider in the requested placement (host memory, pinned and
//    mapped to the GPU when CUDA is present; or GPU memory). The submitter only ever sees a
//    `QpHandle` (handles.h): plain pointers to the send ring, doorbell record, doorbell register
//    (or its mailbox, with DoorbellPath::cpu_assisted), send CQ and submitter state.
//  - Registration and QP creation are host-thread calls, not thread-safe against each other on one
//    protection domain; submission through handles is the data path and never calls back here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dissect/nic/handles.h"

namespace dissect::nic {

class CompletionQueue;

enum class Placement { host, gpu };
const char* to_string(Placement placement);
Placement placement_from_string(const std::string& name);  // throws InvalidArgument naming it

// Who stores the doorbell register of a QP's send queue.
//  - direct: the submitter itself (QpHandle::doorbell is the register).
//  - cpu_assisted: the submitter stores the same 8-byte doorbell value (mlx5/doorbell.h) into a
//    doorbell mailbox in host memory (pinned and mapped to the GPU where there is one), and a host
//    thread of the provider forwards the latest value to the register (NVSHMEM's
//    IBGDA_NIC_HANDLER_CPU, the mlx5 provider's forwarder). QpHandle::doorbell is the mailbox; the
//    dbrec is still written by the submitter. Forwarded doorbells never go backwards, and several
//    submitter doorbells may reach the NIC as one (the forwarder forwards the latest value).
//    The submitter MUST order its WQE and payload stores before the mailbox store at system scope
//    (gda::ordering::system_release_fence, system_fence or system_release_store): the observer of
//    that store is a host thread, outside the GPU, and a GPU-scope fence does not order anything
//    for it. The ordering policy is a compile-time parameter of the submitter, so the provider
//    cannot check it.
enum class DoorbellPath { direct, cpu_assisted };
const char* to_string(DoorbellPath path);
DoorbellPath doorbell_path_from_string(const std::string& name);  // throws InvalidArgument naming it

// Access flags, with the values of IBV_ACCESS_*.
enum Access : uint32_t {
  ACCESS_LOCAL_WRITE = 1,
  ACCESS_REMOTE_WRITE = 2,
  ACCESS_REMOTE_READ = 4,
  ACCESS_REMOTE_ATOMIC = 8,
};
inline constexpr uint32_t ACCESS_ALL =
    ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_ATOMIC;

struct MemoryRegion {
  void* address = nullptr;
  size_t length = 0;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  uint32_t access = 0;
};

struct QpAttributes {
  uint32_t sq_wqebbs = 256;   // send queue depth in 64 B WQEBBs: a power of two, 1..32768
  uint32_t cq_entries = 0;    // send CQ depth; 0 = sq_wqebbs (one CQE per WQEBB can never overrun)
  uint32_t rq_wqes = 0;       // receive queue depth (power of two) for WRITE WITH IMM; 0 = none
  uint32_t max_inline = 220;  // largest inline payload requested, bytes
  Placement placement = Placement::host;
  int telemetry_channel = -1; // telemetry channel this QP belongs to; -1 = the NIC's default
  DoorbellPath doorbell = DoorbellPath::direct;  // who stores the doorbell register (above)
  // The send CQ is collapsed (PRM CQ context cc = 1, with oi = 1): every CQE is written to entry
  // 0, the newest overwriting the last, and cq_entries only sets the owner bit's period. What
  // NVSHMEM's IBGDA creates and its ibgda_poll_cq reads (entry 0's wqe_counter); mini-gda's poll
  // walks the ring and does not run on it. CqHandle::collapsed says so to the submitter.
  bool send_cq_collapsed = false;
  // A CQ of this Nic to share (above): cq_entries must be 0 and send_cq_collapsed false, and the
  // CQ must outlive the QP. Null: a send CQ of the QP's own.
  CompletionQueue* send_cq = nullptr;
};

// --- Completion queues shared between QPs ---
//
// A QP's send CQEs go to a CQ of its own unless QpAttributes::send_cq names a CompletionQueue of
// the same Nic: then every member's CQEs go there, each naming its QP by QPN (sop_drop_qpn), and
// one poll serves every member (a CQ per peer or per PE, as libraries share them). A poll of any
// member's handle consumes the CQ's CQEs for all of them (gda/completion.h). The CQ never
// overruns: a QP joins only while the members' send queue depths sum to at most `cqe_entries`,
// and a submitter never has more signalled WQEs outstanding than its send queue holds.
struct CqAttributes {
  uint32_t cqe_entries = 4096;  // a power of two, 1..2^22
  uint32_t max_members = 64;    // QPs attached at once, 1..4096
  Placement placement = Placement::host;  // where the CQEs and the pollers' state live
};

class CompletionQueue {
 public:
  virtual ~CompletionQueue() = default;  // after every member QP is destroyed
  virtual uint32_t cqn() const = 0;
  virtual CqHandle handle() const = 0;   // what a member's QpHandle::send_cq holds
  virtual uint32_t members() const = 0;  // QPs attached now
};

// What a peer needs to connect to a QP (exchanged out of band by the bootstrap).
struct QpEndpoint {
  uint32_t qpn = 0;
  uint32_t nic_id = 0;    // softnic: the instance; mlx5: unused
  uint16_t lid = 0;
  uint8_t gid[16] = {};
};

class QueuePair {
 public:
  virtual ~QueuePair() = default;
  virtual uint32_t qpn() const = 0;
  virtual QpHandle handle() const = 0;
  virtual RecvQueueHandle recv_handle() const = 0;  // rq == nullptr when the QP has no RQ
  virtual QpEndpoint endpoint() const = 0;
  // RESET -> INIT -> RTR -> RTS towards `remote`.
  virtual void connect(const QpEndpoint& remote) = 0;
};

// --- DC transport (mlx5 names: DCT = DC target, DCI = DC initiator; docs/dc.md) ---
//
// A DCT is a responder endpoint on a protection domain: a DCT number and a DC access key. Any DCI
// of the fabric reaches it by naming both (and the DCT's port LID) in the address vector each DC
// WQE carries, so one DCI serves any number of peers and consecutive WQEs may go to different
// DCTs. DCTs and DCIs are separate calls rather than a transport field of QpAttributes: a DCT has
// no send queue, no handle and no connect(), and a DCI has no connect(), so neither fits
// QueuePair's contract whole.

struct DctAttributes {
  uint64_t dc_key = 0x5623CEAF;  // DC access key (mlx5dv dct_access_key; NVSHMEM's default value)
};

// What a DCI needs to address a DCT (exchanged out of band by the bootstrap, as QpEndpoint).
struct DctEndpoint {
  uint32_t dctn = 0;     // DCT number (24 bits): the AV's dqp_dct
  uint64_t dc_key = 0;   // the AV's dc_key
  uint32_t nic_id = 0;   // softnic: the instance (informational: the AV routes by `lid`)
  uint16_t lid = 0;      // the DCT's port LID: the AV's rlid (softnic: nic_id + 1)
  uint8_t gid[16] = {};  // RoCE / GRH: the full AV's rgid (not used by the softnic)
};

class DcTarget {
 public:
  virtual ~DcTarget() = default;
  virtual uint32_t dctn() const = 0;
  virtual DctEndpoint endpoint() const = 0;
};

class ProtectionDomain {
 public:
  virtual ~ProtectionDomain() = default;
  virtual MemoryRegion register_memory(void* address, size_t length, uint32_t access) = 0;
  virtual void deregister_memory(const MemoryRegion& region) = 0;
  virtual std::unique_ptr<QueuePair> create_qp(const QpAttributes& attributes) = 0;
  // A DCT on this PD: RDMA WRITEs from any DCI that names it land in this PD's regions (rkeys).
  // Providers without DC throw Error naming the call (the default).
  virtual std::unique_ptr<DcTarget> create_dct(const DctAttributes& attributes);
  // A DCI: a send queue ready to post at once (no connect(): connect() throws InvalidArgument),
  // whose WQEs each carry the address vector of their DCT (gda::put_dc). rq_wqes must be 0.
  // Providers without DC throw Error naming the call (the default).
  virtual std::unique_ptr<QueuePair> create_dci(const QpAttributes& attributes);
};

class Nic {
 public:
  virtual ~Nic() = default;
  virtual std::string provider() const = 0;
  virtual std::unique_ptr<ProtectionDomain> create_pd() = 0;
  // A CQ several QPs' send queues share (above). Providers without shared CQs throw Error naming
  // the call (the default).
  virtual std::unique_ptr<CompletionQueue> create_cq(const CqAttributes& attributes);
  // Memory the NIC and the submitter can both reach, in `placement`. Zero-filled.
  virtual void* allocate(size_t bytes, Placement placement) = 0;
  virtual void release(void* address) = 0;
};

// Validates a queue depth: a power of two in [1, limit]; throws InvalidArgument naming `what`.
void check_queue_depth(const char* what, uint64_t depth, uint64_t limit);

}  // namespace dissect::nic
