// DC transport on the mlx5 provider: a DC target (DCT) receives from any DC initiator (DCI) that
// knows its number and access key; one DCI reaches every target, each WQE naming its target in an
// address vector (docs/mlx5_sources.md §1.9, §5.2).
//
// Contract
//  - Both are created from a ProtectionDomain of an mlx5 Nic (open_mlx5_nic); any other PD is
//    refused with InvalidArgument. Destroy them before the PD.
//  - Dct: CREATE_DCT through DEVX. Its CQ and SRQ are ordinary verbs objects in host memory: the
//    submitter never touches the target side. A DCT is ready once created (no state sequence).
//    `target()` is what a peer needs, exchanged out of band like a QpEndpoint.
//  - Dci: CREATE_QP with st = DCI through DEVX, queues in GPU memory (Route A, as RC with
//    placement gpu: needs a CUDA build). `activate()` runs RESET->INIT->RTR->RTS with no remote.
//    `address_vector(target)` returns the 48-byte AV to copy after each WQE's control segment
//    (wqe.h set_dc_av_seg); on RoCE it resolves the next hop's MAC through an address handle.
//
// Status: compiled in CI against rdma-core 44 and unit-tested command by command; never run on a
// NIC (docs/hardware.md). The softnic models DC behind nic::ProtectionDomain::create_dct /
// create_dci (docs/dc.md); this provider is not yet wired to those two calls.
#pragma once

#include <memory>

#include "dissect/mlx5/wqe.h"
#include "dissect/nic/nic.h"
#include "dissect/providers/mlx5/address_vector.h"
#include "dissect/providers/mlx5/dc_commands.h"

namespace dissect::mlx5provider {

struct DctAttributes {
  uint64_t dc_access_key = DC_ACCESS_KEY_DEFAULT;
  uint32_t access = nic::ACCESS_REMOTE_WRITE | nic::ACCESS_REMOTE_READ | nic::ACCESS_REMOTE_ATOMIC;
  uint32_t cq_entries = 64;  // receive CQ: only WRITE_IMM/SEND would write it
  uint32_t srq_wqes = 64;    // the PRM requires an SRQ even when only RDMA arrives
};

class Dct {
 public:
  virtual ~Dct() = default;
  virtual uint32_t dct_number() const = 0;
  // Number, key and this port's address (LID or GID); the initiator adds its own route fields.
  virtual DcTarget target() const = 0;
};

class Dci {
 public:
  virtual ~Dci() = default;
  virtual uint32_t qpn() const = 0;
  virtual nic::QpHandle handle() const = 0;
  virtual void activate() = 0;
  virtual mlx5::mlx5_wqe_av address_vector(const DcTarget& target) const = 0;
};

std::unique_ptr<Dct> create_dct(nic::ProtectionDomain& pd, const DctAttributes& attributes);
std::unique_ptr<Dci> create_dci(nic::ProtectionDomain& pd, const nic::QpAttributes& attributes);

}  // namespace dissect::mlx5provider
