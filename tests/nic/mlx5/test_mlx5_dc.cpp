// On a machine with an mlx5 NIC: create a DC target through DEVX CREATE_DCT and check what a peer
// would receive; with a GPU also create a DCI, move it to RTS and build the AV towards the DCT.
#include <gtest/gtest.h>

#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/gpu_memory.h"
#include "dissect/providers/mlx5/mlx5_provider.h"

namespace dissect::mlx5provider {
namespace {

std::unique_ptr<nic::Nic> open_first_mlx5() {
  const auto devices = list_mlx5_devices();
  if (devices.empty()) return nullptr;
  Mlx5Options options;
  options.device = devices.front();
  options.doorbell = DoorbellMode::cpu_assisted;
  return open_mlx5_nic(options);
}

TEST(Mlx5Dc, CreatesDctAndReportsItsTarget) {
  auto nic = open_first_mlx5();
  if (!nic) GTEST_SKIP() << "RDMA devices present, but none is mlx5";
  auto pd = nic->create_pd();
  auto dct = create_dct(*pd, DctAttributes{});
  EXPECT_NE(dct->dct_number(), 0u);
  const DcTarget t = dct->target();
  EXPECT_EQ(t.dct_number, dct->dct_number());
  EXPECT_EQ(t.dc_key, DC_ACCESS_KEY_DEFAULT);
}

TEST(Mlx5Dc, DciReachesRtsAndBuildsAnAvTowardsTheDct) {
  auto nic = open_first_mlx5();
  if (!nic) GTEST_SKIP() << "RDMA devices present, but none is mlx5";
  if (!cuda_available()) {
    GTEST_SKIP() << "DCI queues are GPU-resident: needs a CUDA build and a GPU";
  }
  auto pd = nic->create_pd();
  auto dct = create_dct(*pd, DctAttributes{});
  nic::QpAttributes attributes;
  attributes.placement = nic::Placement::gpu;
  auto dci = create_dci(*pd, attributes);
  dci->activate();
  const mlx5::mlx5_wqe_av av = dci->address_vector(dct->target());
  EXPECT_EQ(av.dqp_dct.value(), dct->dct_number() | mlx5::MLX5_EXTENDED_UD_AV);
  EXPECT_EQ(av.dc_key.value(), DC_ACCESS_KEY_DEFAULT);
}

}  // namespace
}  // namespace dissect::mlx5provider
