// GPU and NIC per PE: GPU by local rank, NIC by PCIe locality (through doctor's pci_topology) on a
// fake sysfs tree, DISSECT_NIC overrides, and the report line.
#include <gtest/gtest.h>

#include "support/fake_sysfs.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dissect/bootstrap/devices.h"
#include "dissect/common/error.h"

namespace dissect::bootstrap {
namespace {

namespace fs = std::filesystem;

using dissect::testing::FakeSysfs;

// Two GPUs, each with its NIC under its own switch; the NICs are named against PCI order so that
// "closest" and "same index" differ.
void build(FakeSysfs& s) {
  s.add_gpu("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0);
  s.add_nic("mlx5_1", "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0);
  s.add_gpu("pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:00.0/0000:83:00.0", 1);
  s.add_nic("mlx5_0", "pci0000:80/0000:80:01.0/0000:81:00.0/0000:82:01.0/0000:84:00.0", 1);
}

DeviceOptions opts(const FakeSysfs& s, std::optional<std::string> nic = std::string()) {
  DeviceOptions o;
  o.sysfs_root = s.root();
  o.nic_override = std::move(nic);
  return o;
}

TEST(SelectDevices, GpuByLocalRankNicByLocality) {
  FakeSysfs s;
  build(s);
  const auto a = select_devices(0, 2, opts(s));
  EXPECT_EQ(a.gpu, 0);
  EXPECT_EQ(a.gpu_pci, "0000:03:00.0");
  EXPECT_EQ(a.nic, "mlx5_1");
  EXPECT_EQ(a.distance, doctor::PciDistance::same_switch);
  EXPECT_FALSE(a.nic_overridden);
  const auto b = select_devices(3, 2, opts(s));  // 3 % 2 = GPU 1
  EXPECT_EQ(b.gpu, 1);
  EXPECT_EQ(b.nic, "mlx5_0");
  EXPECT_NE(b.description.find("local rank 3: GPU 1 (0000:83:00.0)"), std::string::npos) << b.description;
  EXPECT_NE(b.description.find("NIC mlx5_0 (closest to the GPU)"), std::string::npos) << b.description;
}

TEST(SelectDevices, BusIdsFromCudaWin) {
  FakeSysfs s;
  build(s);
  DeviceOptions o = opts(s);
  o.gpu_pci_bus_ids = {"00000000:83:00.0"};  // CUDA_VISIBLE_DEVICES=1: device 0 is the second GPU
  const auto d = select_devices(0, 1, o);
  EXPECT_EQ(d.gpu, 0);
  EXPECT_EQ(d.gpu_pci, "0000:83:00.0");
  EXPECT_EQ(d.nic, "mlx5_0");
}

TEST(SelectDevices, OverrideByNameOrList) {
  FakeSysfs s;
  build(s);
  const auto one = select_devices(0, 2, opts(s, "mlx5_0"));
  EXPECT_EQ(one.nic, "mlx5_0");
  EXPECT_TRUE(one.nic_overridden);
  EXPECT_EQ(one.distance, doctor::PciDistance::cross_socket);
  const auto list = select_devices(1, 2, opts(s, "mlx5_0,mlx5_1"));
  EXPECT_EQ(list.nic, "mlx5_1");
  EXPECT_NE(list.description.find("(DISSECT_NIC)"), std::string::npos);
  try {
    select_devices(0, 2, opts(s, "mlx5_9"));
    ADD_FAILURE();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("mlx5_9"), std::string::npos) << e.what();
  }
  EXPECT_THROW(select_devices(2, 2, opts(s, "mlx5_0,mlx5_1")), InvalidArgument);
}

TEST(SelectDevices, OverrideFromTheEnvironment) {
  FakeSysfs s;
  build(s);
  ::setenv("DISSECT_NIC", "mlx5_0", 1);
  const auto d = select_devices(0, 2, opts(s, std::nullopt));
  ::unsetenv("DISSECT_NIC");
  EXPECT_EQ(d.nic, "mlx5_0");
  EXPECT_TRUE(d.nic_overridden);
}

TEST(SelectDevices, NoGpuNoNic) {
  FakeSysfs s;  // empty tree
  const auto d = select_devices(1, 0, opts(s));
  EXPECT_EQ(d.gpu, -1);
  EXPECT_EQ(d.nic, "");
  EXPECT_EQ(d.description, "local rank 1: no GPU, no RDMA NIC (softnic)");
  const auto g = select_devices(1, 2, opts(s));
  EXPECT_EQ(g.gpu, 1);
  EXPECT_NE(g.description.find("GPU 1 (not found in sysfs)"), std::string::npos) << g.description;
  EXPECT_THROW(select_devices(-1, 1, opts(s)), InvalidArgument);
  EXPECT_THROW(select_devices(0, -1, opts(s)), InvalidArgument);
}

TEST(SelectDevices, NicsButNoGpuGoByLocalRank) {
  FakeSysfs s;
  build(s);
  const auto d = select_devices(3, 0, opts(s));
  EXPECT_EQ(d.nic, "mlx5_1");  // NICs sorted by name: mlx5_0, mlx5_1; 3 % 2 = 1
  EXPECT_NE(d.description.find("by local rank: no GPU"), std::string::npos) << d.description;
}

}  // namespace
}  // namespace dissect::bootstrap
