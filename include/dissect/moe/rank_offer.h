// One rank per process on a NIC of its own (`dissect moe --provider mlx5`): what each rank tells
// every other before the QPs connect, and how a rank finds the endpoint it connects each of its
// QPs to. Host code over the bootstrap, no NIC and no GPU (tests/cpu/moe drives it over an
// in-process group).
//
// A rank offers its arena (the address its NIC registered: a raddr for the peers, the iova of a
// dma-buf registration is the GPU virtual address) with its rkey, the names of its node, GPU and
// NIC (for the result), and one QpEndpoint (QPN, LID, GID) per QP in the rig's order: QP
// (me -> d, l) at index d x L + l. One allgather of equal-sized records (every rank has ranks x L
// QPs: the launch fingerprint checked the shape first). Rank `me` connects its QP (me -> d, l) to
// the endpoint d offered at index me x L + l: d's QP (d -> me, l); its own QPs to themselves.
//
// The record is versioned like bootstrap/peer_info.h's PeerInfo (which holds at most 64 endpoints;
// EP8 with 256 experts has 256 QPs per rank): a rank built from another commit, or one whose record
// disagrees with the shape, is refused by rank, field and value before anything is connected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "dissect/bootstrap/bootstrap.h"
#include "dissect/nic/nic.h"

namespace dissect::moe {

inline constexpr uint32_t RANK_OFFER_MAGIC = 0x4f454f4d;  // "MOEO" little-endian
inline constexpr uint32_t RANK_OFFER_VERSION = 1;

// The fixed head of a rank's record; its endpoints follow it (bootstrap::WireEndpoint each).
struct RankOfferHead {
  uint32_t magic = RANK_OFFER_MAGIC;
  uint32_t version = RANK_OFFER_VERSION;
  uint32_t rank = 0;
  uint32_t rkey = 0;           // of the arena
  uint64_t arena = 0;          // the arena's address as the owner's NIC registered it
  uint64_t arena_bytes = 0;
  uint32_t qps = 0;            // endpoints that follow
  uint32_t reserved = 0;
  char host[64] = {};          // NUL-terminated (truncated)
  char gpu[32] = {};           // PCI address of the rank's GPU
  char nic[32] = {};           // "mlx5_0"
};
static_assert(std::is_trivially_copyable_v<RankOfferHead>);
static_assert(sizeof(RankOfferHead) == 168);

struct RankOffer {
  RankOfferHead head;
  std::vector<nic::QpEndpoint> endpoints;  // QP (rank -> d, l) at d x L + l
};

// What this rank offers: the names are truncated to their fields.
RankOffer make_rank_offer(uint32_t rank, const nic::MemoryRegion& arena, const std::string& host,
                          const std::string& gpu, const std::string& nic,
                          const std::vector<nic::QpEndpoint>& endpoints);

// The record on the wire: the head, then the endpoints.
std::vector<uint8_t> encode_rank_offer(const RankOffer& offer);
size_t rank_offer_bytes(uint32_t qps);

// Entry `rank` of an allgather, checked against what this launch expects: magic and version, the
// rank, the endpoint count, the arena size, terminated names, and every endpoint addressable (a
// QPN, and a LID or a GID). Throws Error naming the rank, the field and the value.
RankOffer decode_rank_offer(const uint8_t* bytes, size_t size, uint32_t rank, uint32_t qps,
                            uint64_t arena_bytes);

// One allgather; entry d is rank d's offer, decoded and checked as above.
std::vector<RankOffer> exchange_rank_offers(bootstrap::Bootstrap& group, const RankOffer& mine);

// The endpoint rank `me`'s QP (me -> d, l) connects to: d's QP (d -> me, l), of L = `local` local
// experts per rank. For d == me, me's own QP (me -> me, l): connected to itself.
const nic::QpEndpoint& connect_target(const std::vector<RankOffer>& offers, uint32_t me, uint32_t d,
                                      uint32_t l, uint32_t local);

}  // namespace dissect::moe
