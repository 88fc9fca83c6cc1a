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
//  - Behind the nic API (mlx5_nic.cpp): nic::ProtectionDomain::create_dct wraps a Dct in a
//    nic::DcTarget whose endpoint() is dct_endpoint(target()); create_dci wraps an activated Dci in
//    a nic::QueuePair (no receive queue; connect() refused), as the softnic's are. Over
//    InfiniBand the AV gda::put_dc builds from a DctEndpoint (number, key, LID) is the PRM's; on
//    RoCE the next hop's MAC comes only from Dci::address_vector, so both calls refuse an Ethernet
//    port by name there.
//
// Status: compiled in CI against rdma-core 44 and unit-tested command by command; never run on a
// NIC (docs/hardware.md).
#pragma once

#include <memory>
#include <string>

#include "dissect/common/error.h"
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

// What a nic-API DCI submitter needs of `target` (nic::DctEndpoint: number, key, LID, GID).
// Throws InvalidArgument for a RoCE target: its AV needs the next hop's MAC (Dci::address_vector).
inline nic::DctEndpoint dct_endpoint(const DcTarget& target) {
  if (target.link_layer == LinkLayer::ethernet) {
    throw InvalidArgument("mlx5 DCT " + std::to_string(target.dct_number) +
                          ": a RoCE target's address vector needs the next hop's MAC, which only "
                          "mlx5provider::Dci::address_vector resolves; nic::DctEndpoint routes by LID");
  }
  nic::DctEndpoint e;
  e.dctn = target.dct_number;
  e.dc_key = target.dc_key;
  e.lid = target.lid;
  for (int i = 0; i < 16; ++i) e.gid[i] = target.gid[i];
  return e;
}

std::unique_ptr<Dct> create_dct(nic::ProtectionDomain& pd, const DctAttributes& attributes);
std::unique_ptr<Dci> create_dci(nic::ProtectionDomain& pd, const nic::QpAttributes& attributes);

}  // namespace dissect::mlx5provider
