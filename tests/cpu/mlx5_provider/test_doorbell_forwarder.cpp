// CPU-assisted doorbells: the forwarder turns a shadow doorbell value into DBR, fence, doorbell,
// with host memory standing in for the DBR and the UAR register.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "dissect/providers/mlx5/doorbell_forwarder.h"

namespace dissect::mlx5provider {
namespace {

TEST(DoorbellForwarder, ForwardWritesDbrThenRegister) {
  uint64_t shadow = 0;
  mlx5::be32 dbrec{0};
  uint64_t uar = 0;
  const ForwardedQueue q{&shadow, &dbrec, &uar};
  const uint64_t value = mlx5::doorbell_value(0x1234, 0xabcd);
  forward_doorbell(q, value);
  EXPECT_EQ(dbrec.value(), 0x1234u);
  EXPECT_EQ(uar, value);
}

TEST(DoorbellForwarder, RingsOnlyWhenTheShadowMoves) {
  volatile uint64_t shadow = 0;
  mlx5::be32 dbrec{0};
  volatile uint64_t uar = 0;
  DoorbellForwarder forwarder;
  forwarder.add(ForwardedQueue{&shadow, &dbrec, &uar});
  shadow = mlx5::doorbell_value(7, 0x42);
  // The background thread or this call rings it; either way the UAR sees the value once.
  for (int i = 0; i < 1000 && uar != shadow; ++i) {
    forwarder.poll_once();
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  EXPECT_EQ(uar, mlx5::doorbell_value(7, 0x42));
  EXPECT_EQ(dbrec.value(), 7u);
  EXPECT_EQ(forwarder.poll_once(), 0);  // no change, no doorbell
  forwarder.remove(&shadow);
  shadow = mlx5::doorbell_value(9, 0x42);
  EXPECT_EQ(forwarder.poll_once(), 0);
  EXPECT_EQ(dbrec.value(), 7u);
}

}  // namespace
}  // namespace dissect::mlx5provider
