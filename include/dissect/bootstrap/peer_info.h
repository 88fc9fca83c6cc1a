// What one PE tells every other PE before RDMA starts: who it is, where it runs, the QP endpoints
// it offers (up to PEER_INFO_MAX_ENDPOINTS) and one registered buffer (address, length, rkey).
// Size-pinned and versioned, like NVSHMEM's shared structs: PEs built from different commits
// refuse each other with a clear error instead of misreading bytes. It is the one such record: the
// two-rank bench fabric (rank_fabric.h) carries its N requester QPs in it too.
//
// The exchange is one allgather (exchange_peer_info). For all-to-all RC connections, where each PE
// creates one QP per peer, exchange_qp_endpoints() hands each PE the endpoint that every peer
// created for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
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
inline constexpr uint16_t PEER_INFO_VERSION = 2;         // 2: an endpoint array, not one endpoint
// Fixed so that every PE's record has the same size (an allgather needs that, and a peer launched
// with another QP count must still arrive whole to be refused by name). 64 is the rate
// experiment's --threads limit: one QP per submitting thread.
inline constexpr uint32_t PEER_INFO_MAX_ENDPOINTS = 64;

struct PeerInfo {
  uint32_t magic = PEER_INFO_MAGIC;
  uint16_t version = PEER_INFO_VERSION;
  uint16_t size = sizeof(PeerInfo);  // of the sender's struct; must equal ours
  int32_t rank = -1;
  int32_t local_rank = -1;
  uint32_t rkey = 0;                 // of the buffer below
  uint32_t endpoint_count = 0;       // entries of `endpoints` in use, from index 0
  uint64_t address = 0;              // registered buffer: virtual address in the owner's space
  uint64_t length = 0;               // bytes
  char host[64] = {};                // node name, NUL-terminated (truncated)
  char nic[32] = {};                 // NIC the PE uses ("mlx5_0", "softnic"), NUL-terminated
  int32_t gpu = -1;                  // CUDA device index the PE uses; -1 = none
  uint32_t reserved[3] = {};
  // The QPs this PE offers. Their meaning is the caller's: the bench fabric connects its QP i to
  // the peer's endpoints[i].
  WireEndpoint endpoints[PEER_INFO_MAX_ENDPOINTS] = {};
};
// magic, version and size open every version of the record, so that a peer on another version is
// refused by its version instead of misread.
static_assert(offsetof(PeerInfo, version) == 4 && offsetof(PeerInfo, size) == 6);
static_assert(sizeof(PeerInfo) <= UINT16_MAX, "PeerInfo::size must hold it");
static_assert(std::is_trivially_copyable_v<PeerInfo>);
// Version 2, field by field; a change here is a new PEER_INFO_VERSION.
static_assert(offsetof(PeerInfo, rank) == 8 && offsetof(PeerInfo, rkey) == 16);
static_assert(offsetof(PeerInfo, endpoint_count) == 20 && offsetof(PeerInfo, address) == 24);
static_assert(offsetof(PeerInfo, host) == 40 && offsetof(PeerInfo, nic) == 104);
static_assert(offsetof(PeerInfo, gpu) == 136 && offsetof(PeerInfo, endpoints) == 152);
static_assert(sizeof(PeerInfo) == 152 + 28 * PEER_INFO_MAX_ENDPOINTS);

// A PeerInfo for this PE: rank, local rank and host from `bootstrap`, the QP endpoints and the
// region's address/length/rkey; `nic` and `gpu` describe the devices (devices.h). Throws
// InvalidArgument for more than PEER_INFO_MAX_ENDPOINTS endpoints.
PeerInfo make_peer_info(const Bootstrap& bootstrap, const std::vector<nic::QpEndpoint>& endpoints,
                        const nic::MemoryRegion& region, const std::string& nic = "", int gpu = -1);

// Checks a PeerInfo that arrived at index `rank` of an allgather: magic, version and size, rank ==
// `rank`, endpoint_count within the array, NUL-terminated names. Throws Error naming the rank, the
// field and the value it holds.
void check_peer_info(const PeerInfo& info, int rank);

// The endpoints `info` offers, endpoints[0 .. endpoint_count).
std::vector<nic::QpEndpoint> offered_endpoints(const PeerInfo& info);

// One allgather; entry i is PE i's, checked with check_peer_info (so it must say rank i).
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
