// One rank per process on a NIC of its own (`dissect moe --provider mlx5`), host side
// (moe/rank_offer.h): a rank's offer on the wire and back, the exchange over an in-process group
// (a thread per PE, as the processes' environment bootstrap does it over TCP), the endpoint each
// QP connects to, and every malformed or mismatched offer refused by rank, field and value. No
// NIC: the endpoints are made up the way the mlx5 provider fills them (QPN, LID, GID).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "dissect/bootstrap/in_process.h"
#include "dissect/bootstrap/peer_info.h"
#include "dissect/common/error.h"
#include "dissect/moe/rank_offer.h"

namespace moe = dissect::moe;
namespace bs = dissect::bootstrap;
namespace nic = dissect::nic;

namespace {

constexpr uint32_t kLocal = 3;  // local experts per rank: QPs per rank = ranks x kLocal

// Rank r's QP (r -> d, l) gets QPN 0x100000 + 0x1000 r + 0x10 d + l (never 0: QP 0 is the SMI);
// an IB LID on even ranks, a RoCE GID on odd ones (both kinds must cross the wire whole).
nic::QpEndpoint endpoint(uint32_t r, uint32_t d, uint32_t l) {
  nic::QpEndpoint e;
  e.qpn = 0x100000 + 0x1000 * r + 0x10 * d + l;
  if (r % 2 == 0) {
    e.lid = static_cast<uint16_t>(r + 1);
  } else {
    for (int i = 0; i < 16; ++i) e.gid[i] = static_cast<uint8_t>(r * 16 + i);
  }
  return e;
}

moe::RankOffer offer_of(uint32_t r, uint32_t ranks, uint64_t arena_bytes = 1 << 20) {
  std::vector<nic::QpEndpoint> qps;
  for (uint32_t d = 0; d < ranks; ++d) {
    for (uint32_t l = 0; l < kLocal; ++l) qps.push_back(endpoint(r, d, l));
  }
  nic::MemoryRegion mr;
  mr.address = reinterpret_cast<void*>(uintptr_t{0x7f0000000000} + (uintptr_t{r} << 32));
  mr.length = arena_bytes;
  mr.rkey = 0xabc00 + r;
  return moe::make_rank_offer(r, mr, "node" + std::to_string(r), "0000:1" + std::to_string(r) + ":00.0",
                              "mlx5_" + std::to_string(r), qps);
}

std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string decode_error(const std::vector<uint8_t>& wire, uint32_t rank, uint32_t qps, uint64_t arena = 1 << 20) {
  return thrown([&] { moe::decode_rank_offer(wire.data(), wire.size(), rank, qps, arena); });
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

}  // namespace

TEST(MoeRankOffer, RoundTripsEveryFieldAndEndpoint) {
  const moe::RankOffer mine = offer_of(1, 4);
  const std::vector<uint8_t> wire = moe::encode_rank_offer(mine);
  ASSERT_EQ(wire.size(), moe::rank_offer_bytes(4 * kLocal));
  ASSERT_EQ(wire.size(), sizeof(moe::RankOfferHead) + 4 * kLocal * sizeof(bs::WireEndpoint));
  const moe::RankOffer back = moe::decode_rank_offer(wire.data(), wire.size(), 1, 4 * kLocal, 1 << 20);
  EXPECT_EQ(back.head.rank, 1u);
  EXPECT_EQ(back.head.rkey, 0xabc01u);
  EXPECT_EQ(back.head.arena, mine.head.arena);
  EXPECT_EQ(back.head.arena_bytes, uint64_t{1} << 20);
  EXPECT_STREQ(back.head.host, "node1");
  EXPECT_STREQ(back.head.gpu, "0000:11:00.0");
  EXPECT_STREQ(back.head.nic, "mlx5_1");
  ASSERT_EQ(back.endpoints.size(), mine.endpoints.size());
  for (size_t i = 0; i < back.endpoints.size(); ++i) {
    EXPECT_EQ(back.endpoints[i].qpn, mine.endpoints[i].qpn);
    EXPECT_EQ(back.endpoints[i].lid, mine.endpoints[i].lid);
    EXPECT_EQ(std::memcmp(back.endpoints[i].gid, mine.endpoints[i].gid, 16), 0);
  }
}

TEST(MoeRankOffer, LongNamesAreTruncatedAndTerminated) {
  nic::MemoryRegion mr;
  mr.address = reinterpret_cast<void*>(uintptr_t{0x1000});
  mr.length = 64;
  const moe::RankOffer o = moe::make_rank_offer(0, mr, std::string(200, 'h'), "gpu", std::string(40, 'n'),
                                                {endpoint(0, 0, 0)});
  EXPECT_EQ(std::strlen(o.head.host), sizeof o.head.host - 1);
  EXPECT_EQ(std::strlen(o.head.nic), sizeof o.head.nic - 1);
  const std::vector<uint8_t> wire = moe::encode_rank_offer(o);
  EXPECT_EQ(decode_error(wire, 0, 1, 64), "");
}

TEST(MoeRankOffer, EveryQpConnectsToThePeersMirrorQpAfterTheExchange) {
  constexpr uint32_t ranks = 4;
  auto pes = bs::InProcessGroup::create(ranks, 30);
  std::vector<std::vector<moe::RankOffer>> seen(ranks);
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      errors[r] = thrown([&] { seen[r] = moe::exchange_rank_offers(*pes[r], offer_of(r, ranks)); });
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t me = 0; me < ranks; ++me) {
    ASSERT_EQ(errors[me], "") << "rank " << me;
    ASSERT_EQ(seen[me].size(), ranks);
    for (uint32_t d = 0; d < ranks; ++d) {
      EXPECT_EQ(seen[me][d].head.rkey, 0xabc00u + d);
      EXPECT_STREQ(seen[me][d].head.nic, ("mlx5_" + std::to_string(d)).c_str());
      for (uint32_t l = 0; l < kLocal; ++l) {
        // me's QP (me -> d, l) connects to d's QP (d -> me, l); for d == me, to itself.
        const nic::QpEndpoint& target = moe::connect_target(seen[me], me, d, l, kLocal);
        EXPECT_EQ(target.qpn, endpoint(d, me, l).qpn) << "me " << me << " d " << d << " l " << l;
        EXPECT_EQ(target.lid, endpoint(d, me, l).lid);
        EXPECT_EQ(std::memcmp(target.gid, endpoint(d, me, l).gid, 16), 0);
      }
    }
  }
  EXPECT_EQ(moe::connect_target(seen[2], 2, 2, 1, kLocal).qpn, endpoint(2, 2, 1).qpn);  // loopback
  EXPECT_HAS(thrown([&] { moe::connect_target(seen[0], 0, ranks, 0, kLocal); }), "outside 4 ranks x 3 local experts");
}

TEST(MoeRankOffer, ARankWithAnotherShapeIsRefusedByRankAndCount) {
  // Rank 1 offers 2 ranks' QPs where the launch has 3 ranks: the allgather's sizes differ (the
  // bootstrap names both) or, in decode, the count.
  const std::vector<uint8_t> wire = moe::encode_rank_offer(offer_of(1, 2));
  const std::string size = decode_error(wire, 1, 3 * kLocal);
  EXPECT_HAS(size, "the offer of rank 1");
  EXPECT_HAS(size, "expected " + std::to_string(moe::rank_offer_bytes(3 * kLocal)));
  std::vector<uint8_t> padded = wire;
  padded.resize(moe::rank_offer_bytes(3 * kLocal));
  EXPECT_HAS(decode_error(padded, 1, 3 * kLocal), "offers 6 QPs, this launch's shape needs 9");
}

TEST(MoeRankOffer, MalformedOffersAreRefusedByRankFieldAndValue) {
  const std::vector<uint8_t> good = moe::encode_rank_offer(offer_of(2, 2));
  const uint32_t qps = 2 * kLocal;
  EXPECT_EQ(decode_error(good, 2, qps), "");
  EXPECT_HAS(decode_error(good, 1, qps), "the offer of rank 1 says rank 2");
  EXPECT_HAS(decode_error(good, 2, qps, 4096), "arena of 1048576 bytes, this rank's is 4096");

  auto with = [&](size_t offset, const void* bytes, size_t n) {
    std::vector<uint8_t> w = good;
    std::memcpy(w.data() + offset, bytes, n);
    return w;
  };
  const uint32_t magic = 0x12345678, version = 7, zero = 0;
  EXPECT_HAS(decode_error(with(offsetof(moe::RankOfferHead, magic), &magic, 4), 2, qps), "magic 0x12345678");
  EXPECT_HAS(decode_error(with(offsetof(moe::RankOfferHead, version), &version, 4), 2, qps), "version 7");
  const uint64_t no_arena = 0;
  EXPECT_HAS(decode_error(with(offsetof(moe::RankOfferHead, arena), &no_arena, 8), 2, qps), "arena address 0");
  const std::string full(sizeof(moe::RankOfferHead::nic), 'x');
  EXPECT_HAS(decode_error(with(offsetof(moe::RankOfferHead, nic), full.data(), full.size()), 2, qps),
             "unterminated NIC name");

  // Endpoint 4: QPN 0, a QPN past 24 bits, neither LID nor GID.
  const size_t e4 = sizeof(moe::RankOfferHead) + 4 * sizeof(bs::WireEndpoint);
  EXPECT_HAS(decode_error(with(e4 + offsetof(bs::WireEndpoint, qpn), &zero, 4), 2, qps), "QP 4 has QPN 0x0");
  const uint32_t wide = 0x1000000;
  EXPECT_HAS(decode_error(with(e4 + offsetof(bs::WireEndpoint, qpn), &wide, 4), 2, qps), "QPN 0x1000000");
  bs::WireEndpoint blind{};
  blind.qpn = 0x42;
  EXPECT_HAS(decode_error(with(e4, &blind, sizeof blind), 2, qps), "QP 4 (QPN 0x42) has neither a LID nor a GID");
}

TEST(MoeRankOffer, AnOfferWhoseCountDisagreesWithItsEndpointsIsNotSent) {
  moe::RankOffer o = offer_of(0, 2);
  o.endpoints.pop_back();
  EXPECT_HAS(thrown([&] { moe::encode_rank_offer(o); }), "says 6 QPs and holds 5 endpoints");
}
