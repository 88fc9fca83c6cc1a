#include "dissect/moe/rank_offer.h"

#include <cstring>

#include "dissect/bootstrap/peer_info.h"
#include "dissect/bootstrap/wire_name.h"
#include "dissect/common/error.h"

namespace dissect::moe {
namespace {

std::string who(uint32_t rank) { return "moe: the offer of rank " + std::to_string(rank); }

bool all_zero(const uint8_t* bytes, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

}  // namespace

RankOffer make_rank_offer(uint32_t rank, const nic::MemoryRegion& arena, const std::string& host,
                          const std::string& gpu, const std::string& nic,
                          const std::vector<nic::QpEndpoint>& endpoints) {
  RankOffer o;
  o.head.rank = rank;
  o.head.rkey = arena.rkey;
  o.head.arena = reinterpret_cast<uintptr_t>(arena.address);
  o.head.arena_bytes = arena.length;
  o.head.qps = static_cast<uint32_t>(endpoints.size());
  bootstrap::copy_wire_name(o.head.host, host);
  bootstrap::copy_wire_name(o.head.gpu, gpu);
  bootstrap::copy_wire_name(o.head.nic, nic);
  o.endpoints = endpoints;
  return o;
}

size_t rank_offer_bytes(uint32_t qps) {
  return sizeof(RankOfferHead) + size_t{qps} * sizeof(bootstrap::WireEndpoint);
}

std::vector<uint8_t> encode_rank_offer(const RankOffer& offer) {
  if (offer.head.qps != offer.endpoints.size()) {
    throw InvalidArgument(who(offer.head.rank) + " says " + std::to_string(offer.head.qps) + " QPs and holds " +
                          std::to_string(offer.endpoints.size()) + " endpoints");
  }
  std::vector<uint8_t> out(rank_offer_bytes(offer.head.qps));
  std::memcpy(out.data(), &offer.head, sizeof offer.head);
  for (size_t i = 0; i < offer.endpoints.size(); ++i) {
    const bootstrap::WireEndpoint w = bootstrap::to_wire(offer.endpoints[i]);
    std::memcpy(out.data() + sizeof offer.head + i * sizeof w, &w, sizeof w);
  }
  return out;
}

RankOffer decode_rank_offer(const uint8_t* bytes, size_t size, uint32_t rank, uint32_t qps,
                            uint64_t arena_bytes) {
  if (size != rank_offer_bytes(qps)) {
    throw Error(who(rank) + " is " + std::to_string(size) + " bytes, expected " +
                std::to_string(rank_offer_bytes(qps)) + " (" + std::to_string(qps) + " QPs)");
  }
  RankOffer o;
  std::memcpy(&o.head, bytes, sizeof o.head);
  const RankOfferHead& h = o.head;
  if (h.magic != RANK_OFFER_MAGIC || h.version != RANK_OFFER_VERSION) {
    throw Error(who(rank) + " has magic " + hex(h.magic) + " version " + std::to_string(h.version) + ", expected " +
                hex(RANK_OFFER_MAGIC) + " version " + std::to_string(RANK_OFFER_VERSION) + " (another build?)");
  }
  if (h.rank != rank) throw Error(who(rank) + " says rank " + std::to_string(h.rank));
  if (h.qps != qps) {
    throw Error(who(rank) + " offers " + std::to_string(h.qps) + " QPs, this launch's shape needs " +
                std::to_string(qps));
  }
  if (h.arena_bytes != arena_bytes) {
    throw Error(who(rank) + " has an arena of " + std::to_string(h.arena_bytes) + " bytes, this rank's is " +
                std::to_string(arena_bytes));
  }
  if (h.arena == 0) throw Error(who(rank) + " has arena address 0");
  bootstrap::check_wire_name(h.host, "host", who(rank));
  bootstrap::check_wire_name(h.gpu, "GPU", who(rank));
  bootstrap::check_wire_name(h.nic, "NIC", who(rank));
  for (uint32_t i = 0; i < qps; ++i) {
    bootstrap::WireEndpoint w;
    std::memcpy(&w, bytes + sizeof h + size_t{i} * sizeof w, sizeof w);
    if (w.qpn == 0 || w.qpn > 0xffffffu) {
      throw Error(who(rank) + ": QP " + std::to_string(i) + " has QPN " + hex(w.qpn) + " (24 bits, not 0)");
    }
    if (w.lid == 0 && all_zero(w.gid, sizeof w.gid)) {
      throw Error(who(rank) + ": QP " + std::to_string(i) + " (QPN " + hex(w.qpn) +
                  ") has neither a LID nor a GID: no path reaches it");
    }
    o.endpoints.push_back(bootstrap::from_wire(w));
  }
  return o;
}

std::vector<RankOffer> exchange_rank_offers(bootstrap::Bootstrap& group, const RankOffer& mine) {
  const std::vector<uint8_t> wire = encode_rank_offer(mine);
  const std::vector<uint8_t> all = group.allgather(wire.data(), wire.size());
  std::vector<RankOffer> out;
  for (uint32_t d = 0; d < static_cast<uint32_t>(group.world_size()); ++d) {
    out.push_back(decode_rank_offer(all.data() + size_t{d} * wire.size(), wire.size(), d, mine.head.qps,
                                    mine.head.arena_bytes));
  }
  return out;
}

const nic::QpEndpoint& connect_target(const std::vector<RankOffer>& offers, uint32_t me, uint32_t d,
                                      uint32_t l, uint32_t local) {
  if (d >= offers.size() || me >= offers.size() || l >= local) {
    throw InvalidArgument("moe: connect_target(me " + std::to_string(me) + ", d " + std::to_string(d) + ", l " +
                          std::to_string(l) + ") outside " + std::to_string(offers.size()) + " ranks x " +
                          std::to_string(local) + " local experts");
  }
  return offers[d].endpoints.at(size_t{me} * local + l);
}

}  // namespace dissect::moe
