// What one PE tells every other PE before RDMA starts: who it is, where it runs, one QP endpoint,
// and one registered buffer (address, length, rkey). Size-pinned and versioned, like NVSHMEM's
// shared structs: PEs built from different commits refuse each other with a clear error instead of
// misreading bytes.
//
// The exchange is one allgather (exchange_peer_info). For all-to-all RC connections, where each PE
// creates one QP per peer, exchange_qp_endpoints() hands each PE the endpoint that every peer
// created for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dissect/bootstrap/bootstrap.h"
#include "dissect/nic/nic.h"

namespace dissect::bootstrap {

// nic::QpEndpoint on the wire: explicit padding, fixed size, no compiler-chosen holes.
struct WireEndpoint {
  uint32_t qpn;
  uint32_t nic_id;   // softnic: the instance; mlx5: unused
  uint16_t lid;      // InfiniBand LID; 0 on RoCE
  uint16_t reserved;
  uint8_t gid[16];   // RoCE / global routing GID
};
static_assert(sizeof(WireEndpoint) == 28);
static_assert(std::is_trivially_copyable_v<WireEndpoint>);

WireEndpoint to_wire(const nic::QpEndpoint& endpoint);
nic::QpEndpoint from_wire(const WireEndpoint& wire);

inline constexpr uint32_t PEER_INFO_MAGIC = 0x49504344;  // "DCPI" little-endian
inline constexpr uint16_t PEER_INFO_VERSION = 1;

struct PeerInfo {
  uint32_t magic = PEER_INFO_MAGIC;
  uint16_t version = PEER_INFO_VERSION;
  uint16_t size = sizeof(PeerInfo);  // of the sender's struct; must equal ours
  int32_t rank = -1;
  int32_t local_rank = -1;
  WireEndpoint endpoint = {};  // the QP this PE offers (qpn 0 = none)
  uint32_t rkey = 0;           // of the buffer below
  uint64_t address = 0;        // registered buffer: virtual address in the owner's space
  uint64_t length = 0;         // bytes
  char host[64] = {};          // node name, NUL-terminated (truncated)
  char nic[32] = {};           // NIC the PE uses ("mlx5_0", "softnic"), NUL-terminated
  int32_t gpu = -1;            // CUDA device index the PE uses; -1 = none
  uint32_t reserved[7] = {};
};
static_assert(sizeof(PeerInfo) == 192);
static_assert(offsetof(PeerInfo, endpoint) == 16);
static_assert(offsetof(PeerInfo, rkey) == 44);
static_assert(offsetof(PeerInfo, address) == 48);
static_assert(offsetof(PeerInfo, host) == 64);
static_assert(offsetof(PeerInfo, nic) == 128);
static_assert(offsetof(PeerInfo, gpu) == 160);
static_assert(std::is_trivially_copyable_v<PeerInfo>);

// A PeerInfo for this PE: rank, local rank and host from `bootstrap`, the QP endpoint and the
// region's address/length/rkey; `nic` and `gpu` describe the devices (devices.h).
PeerInfo make_peer_info(const Bootstrap& bootstrap, const nic::QpEndpoint& endpoint,
                        const nic::MemoryRegion& region, const std::string& nic = "", int gpu = -1);

// One allgather. Checks every entry (magic, version, size, rank == its index) and throws Error
// naming the PE and the field that disagrees. Entry i is PE i's.
std::vector<PeerInfo> exchange_peer_info(Bootstrap& bootstrap, const PeerInfo& mine);

// All-to-all RC wiring: `mine[p]` is the endpoint of the QP this PE created for peer p (its own
// entry, p == rank, is exchanged too; use it for loopback or leave it zero). Returns `remote` with
// remote[p] = the endpoint peer p created for this PE: connect mine[p] to remote[p].
// Throws InvalidArgument when mine.size() != world_size.
std::vector<nic::QpEndpoint> exchange_qp_endpoints(Bootstrap& bootstrap,
                                                   const std::vector<nic::QpEndpoint>& mine);

// A peer's registered buffer, as a one-sided put or get needs it.
struct RemoteRegion {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t rkey = 0;
  uint32_t reserved = 0;
};
static_assert(sizeof(RemoteRegion) == 24);
// One allgather of every PE's region; entry i is PE i's.
std::vector<RemoteRegion> exchange_regions(Bootstrap& bootstrap, const nic::MemoryRegion& mine);

// This node's name (gethostname), for PeerInfo::host and the environment bootstrap's local ranks.
std::string host_name();

}  // namespace dissect::bootstrap
