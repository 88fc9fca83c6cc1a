// Cross-process softnic (the third PE layout: one process per GPU), after NVSHMEM's symmetric heap.
//
// A SoftNic created with SoftNicOptions::ipc_arena_bytes > 0 takes everything its engine
// and its peers' engines touch from one cudaMalloc'ed arena on its device: the NIC tables, the
// queues of QPs placed in GPU memory, and allocate(..., Placement::gpu) buffers (register those as
// MRs). One cudaIpcMemHandle then exports all of it. The peer process opens the handle once
// (import_peer) and reaches every owner-space address A of the arena at A + delta, delta = its
// mapping's base - the owner's base; the QpContext of a cross-process connection carries that
// RemoteWindow and execute.h applies it (context.h).
//
// Protocol (every PE, any bootstrap; see tests/gpu/gda/gda_gpu_test.cu, pe_two_processes):
//   1. create the NIC (ipc_arena_bytes > 0, start_engine = false), PD, QPs (Placement::gpu),
//      buffers (allocate(..., Placement::gpu)), MRs;
//   2. allgather {nic.ipc_export(), qpn, rkey, buffer address};
//   3. alias = nic.import_peer(peer_export); qp->connect({peer_qpn, alias}); start();
//   4. teardown: stop() on every PE, barrier, close_imports() on every PE, barrier, destroy.
//      An exporter must not free its arena (destroy the NIC) while an importer's engine still runs.
// Puts name the peer's buffers by their owner-space addresses and rkeys, exactly as with a NIC.
//
// Limits: the two processes use different GPUs with peer access (same-GPU processes time-slice
// the engine kernel: DESIGN.md); only the GPU engine exports; MRs outside the arena (host memory)
// and host-placed queues are not reachable from the peer: a put there completes with
// REMOTE_ACCESS_ERR (WRITE WITH IMM to host-placed receive queues: REMOTE_OP_ERR).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace dissect::softnic {

inline constexpr uint32_t IPC_EXPORT_MAGIC = 0x43504953;  // "SIPC" little-endian
inline constexpr uint32_t IPC_EXPORT_VERSION = 1;

// What a peer process needs to reach one SoftNic: size-pinned, exchanged as raw bytes.
struct IpcExport {
  uint32_t magic = IPC_EXPORT_MAGIC;
  uint32_t version = IPC_EXPORT_VERSION;
  uint32_t nic_id = 0;       // the owner's id, for messages only (ids repeat across processes)
  int32_t device = -1;       // the owner's CUDA device ordinal, for messages only
  int32_t pid = 0;           // the owner's process, for messages and to refuse a self-import
  uint32_t reserved = 0;
  uint64_t arena_base = 0;   // owner-space address of the arena
  uint64_t arena_bytes = 0;
  uint64_t tables = 0;       // owner-space NicTables*
  uint8_t handle[64] = {};   // cudaIpcMemHandle_t of the arena
};
static_assert(sizeof(IpcExport) == 112);
static_assert(std::is_trivially_copyable_v<IpcExport>);

}  // namespace dissect::softnic
