// One processing element on a SoftNic, as the GPU experiments (bench/gpu) and the GPU tests
// (tests/gpu) build it: a PD, a QP towards the peer PE, and a source and a destination buffer of
// the same size in the QP's placement, both registered with ACCESS_ALL.
//
// Host control path only. Build and connect every PE before the engines start
// (SoftNicOptions::start_engine = false, then start()): allocation beside a running engine
// kernel can hang (softnic/gpu_engine.h, HAZARDS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "dissect/nic/nic.h"
#include "dissect/softnic/gpu_engine.h"

namespace dissect::bench {

struct GpuPe {
  softnic::SoftNic* nic = nullptr;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::unique_ptr<nic::QueuePair> qp;
  uint8_t* src = nullptr;  // `bytes` in attributes.placement, zero-filled
  uint8_t* dst = nullptr;
  nic::MemoryRegion src_mr, dst_mr;
};

// Fills `pe` on `on`: its PD, a QP with `attributes`, and `bytes` each of source and destination
// in attributes.placement. The buffers belong to the NIC (released with it).
inline void open_pe(GpuPe& pe, softnic::SoftNic* on, const nic::QpAttributes& attributes,
                    size_t bytes) {
  pe.nic = on;
  pe.pd = on->create_pd();
  pe.qp = pe.pd->create_qp(attributes);
  pe.src = static_cast<uint8_t*>(on->allocate(bytes, attributes.placement));
  pe.dst = static_cast<uint8_t*>(on->allocate(bytes, attributes.placement));
  pe.src_mr = pe.pd->register_memory(pe.src, bytes, nic::ACCESS_ALL);
  pe.dst_mr = pe.pd->register_memory(pe.dst, bytes, nic::ACCESS_ALL);
}

// Connects the two PEs' QPs to each other.
inline void connect_pes(GpuPe& a, GpuPe& b) {
  a.qp->connect(b.qp->endpoint());
  b.qp->connect(a.qp->endpoint());
}

}  // namespace dissect::bench
