// NIC choice per GPU on fake sysfs trees laid out like the real one: devices under
// devices/pci<domain>:<bus>/<root port>/<switch ports>/..., reached through symlinks from
// class/infiniband/<nic>/device and bus/pci/devices/<address>.
#include <gtest/gtest.h>

#include "support/fake_sysfs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dissect/doctor/pci_topology.h"

namespace dissect::doctor {
namespace {

namespace fs = std::filesystem;

using dissect::testing::FakeSysfs;

// Two sockets; socket 0 has two PCIe switches under one root port each, socket 1 one switch.
void build_dgx_like(FakeSysfs& s) {
  s.add_gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0);
  s.add_nic("mlx5_0", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0);
  s.add_gpu("pci0000:00/0000:00:02.0/0000:11:00.0/0000:12:00.0/0000:13:00.0", 0);
  s.add_nic("mlx5_1", "pci0000:00/0000:00:02.0/0000:11:00.0/0000:12:01.0/0000:14:00.0", 0);
  s.add_gpu("pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0", 1);
  s.add_nic("mlx5_2", "pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:84:00.0", 1);
}

TEST(PciTopology, FindsGpusAndNicsThroughSymlinks) {
  FakeSysfs s;
  build_dgx_like(s);
  const auto gpus = find_gpus(s.root());
  const auto nics = find_rdma_nics(s.root());
  ASSERT_EQ(gpus.size(), 3u);
  ASSERT_EQ(nics.size(), 3u);
  EXPECT_EQ(gpus[0].address, "0000:03:00.0");
  EXPECT_EQ(gpus[0].chain.front(), "pci0000:00");
  EXPECT_EQ(gpus[2].numa_node, 1);
  EXPECT_EQ(nics[1].name, "mlx5_1");
  EXPECT_EQ(nics[1].address, "0000:14:00.0");
}

TEST(PciTopology, PicksTheNicUnderTheGpusSwitch) {
  FakeSysfs s;
  build_dgx_like(s);
  const auto gpus = find_gpus(s.root());
  const auto nics = find_rdma_nics(s.root());
  const char* expected[] = {"mlx5_0", "mlx5_1", "mlx5_2"};
  for (size_t g = 0; g < gpus.size(); ++g) {
    const NicChoice c = select_nic(gpus[g], nics, "", 0);
    EXPECT_EQ(c.nic, expected[g]) << "GPU " << g;
    EXPECT_EQ(c.distance, PciDistance::same_switch);
    EXPECT_FALSE(c.overridden);
  }
}

TEST(PciTopology, DistanceClasses) {
  FakeSysfs s;
  build_dgx_like(s);
  s.add_nic("mlx5_3", "pci0000:00/0000:00:03.0/0000:21:00.0", 0);  // same host bridge
  s.add_nic("mlx5_4", "pci0000:40/0000:40:01.0/0000:41:00.0", 0);  // other bridge, node 0
  const auto gpus = find_gpus(s.root());
  const auto nics = find_rdma_nics(s.root());
  auto nic = [&](const char* name) {
    for (const auto& n : nics) if (n.name == name) return n;
    throw std::runtime_error(name);
  };
  EXPECT_EQ(pci_distance(gpus[0], nic("mlx5_0")), PciDistance::same_switch);
  EXPECT_EQ(pci_distance(gpus[0], nic("mlx5_1")), PciDistance::same_root_complex);
  EXPECT_EQ(pci_distance(gpus[0], nic("mlx5_3")), PciDistance::same_root_complex);
  EXPECT_EQ(pci_distance(gpus[0], nic("mlx5_4")), PciDistance::same_numa_node);
  EXPECT_EQ(pci_distance(gpus[0], nic("mlx5_2")), PciDistance::cross_socket);
}

TEST(PciTopology, FallsBackToTheSameNumaNodeThenAnything) {
  FakeSysfs s;
  s.add_gpu("pci0000:00/0000:00:01.0/0000:03:00.0", 0);
  s.add_nic("mlx5_0", "pci0000:80/0000:80:01.0/0000:84:00.0", 1);
  s.add_nic("mlx5_1", "pci0000:40/0000:40:01.0/0000:41:00.0", 0);
  const auto gpus = find_gpus(s.root());
  const auto nics = find_rdma_nics(s.root());
  const NicChoice c = select_nic(gpus[0], nics, "", 0);
  EXPECT_EQ(c.nic, "mlx5_1");
  EXPECT_EQ(c.distance, PciDistance::same_numa_node);
  const NicChoice only_far = select_nic(gpus[0], {nics[0]}, "", 0);
  EXPECT_EQ(only_far.nic, "mlx5_0");
  EXPECT_EQ(only_far.distance, PciDistance::cross_socket);
  EXPECT_EQ(select_nic(gpus[0], {}, "", 0).nic, "");
}

TEST(PciTopology, OverrideByNameAndPerRankList) {
  FakeSysfs s;
  build_dgx_like(s);
  const auto gpus = find_gpus(s.root());
  const auto nics = find_rdma_nics(s.root());
  NicChoice c = select_nic(gpus[0], nics, "mlx5_2", 5);
  EXPECT_EQ(c.nic, "mlx5_2");
  EXPECT_TRUE(c.overridden);
  EXPECT_EQ(c.distance, PciDistance::cross_socket);
  c = select_nic(gpus[0], nics, "mlx5_1,mlx5_0,mlx5_2", 1);
  EXPECT_EQ(c.nic, "mlx5_0");
  EXPECT_THROW(select_nic(gpus[0], nics, "mlx5_1,mlx5_0", 2), std::invalid_argument);
  EXPECT_THROW(select_nic(gpus[0], nics, "mlx5_9", 0), std::invalid_argument);
}

TEST(PciTopology, MissingTreeFindsNothing) {
  EXPECT_TRUE(find_gpus("/nonexistent/sysfs").empty());
  EXPECT_TRUE(find_rdma_nics("/nonexistent/sysfs").empty());
}

}  // namespace
}  // namespace dissect::doctor
