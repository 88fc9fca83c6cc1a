#include <gtest/gtest.h>

#include "nic_skip.h"

int main(int argc, char** argv) {
  dissect::nictest::skip_without_rdma_device();
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
