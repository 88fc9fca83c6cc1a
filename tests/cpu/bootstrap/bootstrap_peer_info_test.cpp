// PeerInfo's wire layout and the checks exchange_peer_info makes on what peers send. PeerInfo is
// also the record of the two-rank bench fabric (rank_fabric.h), so its N-endpoint cases live here.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dissect/bootstrap/in_process.h"
#include "dissect/bootstrap/peer_info.h"

namespace dissect::bootstrap {
namespace {

TEST(PeerInfo, EndpointRoundTripsThroughTheWireForm) {
  nic::QpEndpoint e;
  e.qpn = 0xabcdef;
  e.nic_id = 3;
  e.lid = 0x1234;
  for (int i = 0; i < 16; ++i) e.gid[i] = static_cast<uint8_t>(0xf0 + i);
  const WireEndpoint w = to_wire(e);
  EXPECT_EQ(w.reserved, 0);
  const nic::QpEndpoint back = from_wire(w);
  EXPECT_EQ(back.qpn, e.qpn);
  EXPECT_EQ(back.nic_id, e.nic_id);
  EXPECT_EQ(back.lid, e.lid);
  EXPECT_EQ(std::memcmp(back.gid, e.gid, 16), 0);
}

TEST(PeerInfo, DefaultsAndFields) {
  PeerInfo p;
  EXPECT_EQ(p.magic, PEER_INFO_MAGIC);
  EXPECT_EQ(p.version, PEER_INFO_VERSION);
  EXPECT_EQ(p.size, sizeof(PeerInfo));
  auto pes = InProcessGroup::create(1);
  nic::MemoryRegion mr;
  mr.address = &p;
  mr.length = 64;
  mr.rkey = 0x77;
  const std::string long_nic(100, 'n');  // truncated, still terminated
  const PeerInfo m = make_peer_info(*pes[0], {}, mr, long_nic, 2);
  EXPECT_EQ(m.endpoint_count, 0u);
  EXPECT_EQ(m.address, reinterpret_cast<uint64_t>(&p));
  EXPECT_EQ(m.rkey, 0x77u);
  EXPECT_EQ(std::strlen(m.nic), sizeof(m.nic) - 1);
  EXPECT_EQ(std::string(m.host), host_name().substr(0, sizeof(m.host) - 1));
  EXPECT_EQ(m.gpu, 2);
}

// Three endpoints, a buffer and device names, as the bench fabric's rank 1 offers them.
PeerInfo sample_peer_info(const Bootstrap& rank_one) {
  std::vector<nic::QpEndpoint> endpoints;
  for (uint32_t i = 0; i < 3; ++i) {
    nic::QpEndpoint q;
    q.qpn = 0x100 + i;
    q.nic_id = 40 + i;
    q.lid = static_cast<uint16_t>(7 + i);
    for (int b = 0; b < 16; ++b) q.gid[b] = static_cast<uint8_t>(b * 3 + i);
    endpoints.push_back(q);
  }
  nic::MemoryRegion mr;
  mr.address = reinterpret_cast<void*>(0x7f0012345000ull);
  mr.length = 512 * 8;
  mr.rkey = 0xabcd;
  return make_peer_info(rank_one, endpoints, mr, "mlx5_3", 1);
}

TEST(PeerInfo, RoundTripThroughBytesKeepsEveryField) {
  auto pes = InProcessGroup::create(2);
  const PeerInfo in = sample_peer_info(*pes[1]);
  // Through bytes, as the allgather carries it.
  std::vector<uint8_t> bytes(sizeof(in));
  std::memcpy(bytes.data(), &in, sizeof(in));
  PeerInfo out;
  std::memcpy(&out, bytes.data(), sizeof(out));
  EXPECT_NO_THROW(check_peer_info(out, 1));
  EXPECT_EQ(out.rank, 1);
  EXPECT_EQ(out.local_rank, pes[1]->local_rank());
  EXPECT_EQ(std::string(out.host), host_name().substr(0, sizeof(out.host) - 1));
  EXPECT_EQ(std::string(out.nic), "mlx5_3");
  EXPECT_EQ(out.gpu, 1);
  EXPECT_EQ(out.address, 0x7f0012345000ull);
  EXPECT_EQ(out.length, 512u * 8);
  EXPECT_EQ(out.rkey, 0xabcdu);
  const std::vector<nic::QpEndpoint> endpoints = offered_endpoints(out);
  ASSERT_EQ(endpoints.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(endpoints[i].qpn, 0x100u + i);
    EXPECT_EQ(endpoints[i].nic_id, 40u + i);
    EXPECT_EQ(endpoints[i].lid, 7u + i);
    for (int b = 0; b < 16; ++b) EXPECT_EQ(endpoints[i].gid[b], b * 3 + i) << "QP " << i;
  }
}

// Each case corrupts PE 0's PeerInfo one way; exchange_peer_info must name the field and value.
TEST(PeerInfo, ExchangeRejectsForeignEntries) {
  struct Case {
    void (*corrupt)(PeerInfo&);
    const char* expected;
  } cases[] = {
      {[](PeerInfo& p) { p.magic = 0x44434249; }, "PeerInfo from rank 0 has magic 0x44434249"},
      {[](PeerInfo& p) { p.version = 9; }, "PeerInfo from rank 0 is version 9 size 1944"},
      {[](PeerInfo& p) { p.size = 128; }, "size 128, this PE speaks version 2 size 1944"},
      {[](PeerInfo& p) { p.rank = 5; }, "PeerInfo from rank 0 says rank 5"},
      {[](PeerInfo& p) { p.endpoint_count = PEER_INFO_MAX_ENDPOINTS + 1; },
       "PeerInfo from rank 0 offers 65 QP endpoints"},
      {[](PeerInfo& p) { std::memset(p.host, 'h', sizeof(p.host)); }, "unterminated host name"},
      {[](PeerInfo& p) { std::memset(p.nic, 'n', sizeof(p.nic)); }, "unterminated nic name"},
  };
  for (const Case& c : cases) {
    auto pes = InProcessGroup::create(1);
    PeerInfo p = make_peer_info(*pes[0], {nic::QpEndpoint{}}, nic::MemoryRegion{});
    c.corrupt(p);
    try {
      exchange_peer_info(*pes[0], p);
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
  }
}

// A record that arrived at another index than its sender's rank is refused by the index.
TEST(PeerInfo, CheckNamesTheIndexTheRecordArrivedAt) {
  auto pes = InProcessGroup::create(2);
  try {
    check_peer_info(sample_peer_info(*pes[1]), 0);
    ADD_FAILURE() << "rank 1's PeerInfo accepted at index 0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("PeerInfo from rank 0 says rank 1"), std::string::npos)
        << e.what();
  }
}

TEST(PeerInfo, MoreEndpointsThanTheRecordHoldsAreRefused) {
  auto pes = InProcessGroup::create(1);
  std::vector<nic::QpEndpoint> endpoints(PEER_INFO_MAX_ENDPOINTS);
  EXPECT_EQ(make_peer_info(*pes[0], endpoints, nic::MemoryRegion{}).endpoint_count,
            PEER_INFO_MAX_ENDPOINTS);
  endpoints.emplace_back();
  try {
    make_peer_info(*pes[0], endpoints, nic::MemoryRegion{});
    ADD_FAILURE() << "65 endpoints accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("65 QP endpoints, a PeerInfo carries at most 64"),
              std::string::npos)
        << e.what();
  }
}

TEST(PeerInfo, EndpointListMustHaveOneEntryPerPe) {
  auto pes = InProcessGroup::create(1);
  EXPECT_THROW(exchange_qp_endpoints(*pes[0], {}), InvalidArgument);
  nic::QpEndpoint self;
  self.qpn = 9;
  EXPECT_EQ(exchange_qp_endpoints(*pes[0], {self})[0].qpn, 9u);
}

}  // namespace
}  // namespace dissect::bootstrap
