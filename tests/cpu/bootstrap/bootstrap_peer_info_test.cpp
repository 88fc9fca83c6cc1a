// PeerInfo's wire layout and the checks exchange_peer_info makes on what peers send.
#include <gtest/gtest.h>

#include <cstring>

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
  const PeerInfo m = make_peer_info(*pes[0], nic::QpEndpoint{}, mr, long_nic, 2);
  EXPECT_EQ(m.address, reinterpret_cast<uint64_t>(&p));
  EXPECT_EQ(m.rkey, 0x77u);
  EXPECT_EQ(std::strlen(m.nic), sizeof(m.nic) - 1);
  EXPECT_EQ(std::string(m.host), host_name().substr(0, sizeof(m.host) - 1));
  EXPECT_EQ(m.gpu, 2);
}

// Each case corrupts PE 0's PeerInfo one way; exchange_peer_info must name it.
TEST(PeerInfo, ExchangeRejectsForeignEntries) {
  struct Case {
    void (*corrupt)(PeerInfo&);
    const char* expected;
  } cases[] = {
      {[](PeerInfo& p) { p.magic = 0x44434249; }, "PeerInfo from rank 0 has magic 0x44434249"},
      {[](PeerInfo& p) { p.version = 2; }, "PeerInfo from rank 0 is version 2 size 192"},
      {[](PeerInfo& p) { p.size = 128; }, "size 128, this PE speaks version 1 size 192"},
      {[](PeerInfo& p) { p.rank = 5; }, "PeerInfo from rank 0 says rank 5"},
      {[](PeerInfo& p) { std::memset(p.host, 'h', sizeof(p.host)); }, "unterminated host"},
  };
  for (const Case& c : cases) {
    auto pes = InProcessGroup::create(1);
    PeerInfo p = make_peer_info(*pes[0], nic::QpEndpoint{}, nic::MemoryRegion{});
    c.corrupt(p);
    try {
      exchange_peer_info(*pes[0], p);
      ADD_FAILURE() << "accepted: " << c.expected;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << e.what();
    }
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
