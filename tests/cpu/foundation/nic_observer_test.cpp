// The softnic tells the process's observer (nic/observer.h) about its NICs and QPs and keeps the
// slots it hands back; with telemetry not linked into this binary, the observer here is a fake
// installed before the first NIC opens.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dissect/gda/gda.h"
#include "dissect/nic/observer.h"
#include "support/loopback.h"

namespace nic = dissect::nic;
namespace telemetry = dissect::telemetry;
using dissect::testing::Loopback;

namespace {

class FakeObserver final : public nic::Observer {
 public:
  int open_device(const nic::DeviceDescription& device,
                  std::unique_ptr<telemetry::HwCounterSource> hardware) override {
    devices.push_back(device.roce_device + "/" + device.hw_type);
    sources.push_back(std::move(hardware));
    return static_cast<int>(devices.size()) - 1;
  }
  telemetry::QpCounters* track_qp(int device, uint32_t channel, uint32_t qp_number) override {
    tracked.push_back({device, channel, qp_number});
    auto slot = std::make_unique<telemetry::QpCounters>();
    telemetry::initialise_counters(*slot, qp_number, telemetry::HistogramShape{4, 1000, 1});
    slots.push_back(std::move(slot));
    return slots.back().get();
  }
  uint64_t add_device_block(std::function<void()>) override { return 0; }
  void gather_device_block(uint64_t) override {}
  bool merge_device_block(telemetry::QpCounters*, const telemetry::QpCounters&) override {
    return false;
  }

  struct Tracked {
    int device;
    uint32_t channel;
    uint32_t qp_number;
  };
  std::vector<std::string> devices;
  std::vector<std::unique_ptr<telemetry::HwCounterSource>> sources;
  std::vector<Tracked> tracked;
  std::vector<std::unique_ptr<telemetry::QpCounters>> slots;
};

FakeObserver* the_fake = new FakeObserver;  // never destroyed: the NICs may outlive the test
nic::Observer* fake_source() { return the_fake; }

}  // namespace

TEST(NicObserver, TheSoftnicOpensItsNicAndTracksEveryQpWithTheObserver) {
  nic::set_observer_source(fake_source);  // before the first NIC: observer() resolves once
  nic::QpAttributes attributes;
  attributes.telemetry_channel = 3;
  Loopback lb(attributes, 4096);
  ASSERT_EQ(nic::observer(), the_fake);
  ASSERT_EQ(the_fake->devices.size(), 1u);
  EXPECT_EQ(the_fake->devices[0].substr(the_fake->devices[0].find('/')), "/softnic");
  ASSERT_NE(the_fake->sources[0], nullptr) << "the NIC gave its model counters to the observer";
  ASSERT_EQ(the_fake->tracked.size(), 2u);  // requester and responder
  EXPECT_EQ(the_fake->tracked[0].device, 0);
  EXPECT_EQ(the_fake->tracked[0].channel, 3u);
  EXPECT_EQ(the_fake->tracked[0].qp_number, lb.requester->qpn());
  EXPECT_EQ(the_fake->tracked[1].qp_number, lb.responder->qpn());
  // The QP's handle carries the slot the observer handed out: the data path counts into it.
  EXPECT_EQ(lb.qp().telemetry, the_fake->slots[0].get());
  if (!dissect::gda::TELEMETRY_COMPILED) return;
  uint64_t end = 0;
  const dissect::gda::WriteRequest r{lb.source_address(), lb.source_mr.lkey, 64,
                                     lb.destination_address(), lb.destination_mr.rkey};
  using Policy = dissect::gda::counted<dissect::gda::ordering::system_release_store>;
  constexpr auto kExclusive = dissect::gda::Sharing::exclusive;
  ASSERT_EQ((dissect::gda::put<Policy>(lb.qp(), r, dissect::gda::Completion::signaled, &end)),
            dissect::gda::Status::ok);
  ASSERT_EQ((dissect::gda::wait_completion<Policy, kExclusive>(lb.qp(), end)), dissect::gda::Status::ok);
  EXPECT_EQ(the_fake->slots[0]->num_wqe_sent, 1u);
}
