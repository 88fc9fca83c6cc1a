// What `--provider mlx5` refuses before it opens a device or waits for a peer: no device, an
// unknown --device, a single-rank launch, a world size other than 2. Each is one line saying what
// to do.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dissect/bench/mlx5_launch.h"
#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

bootstrap::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.find('\n'), std::string::npos) << "not one line: " << text;
    return text;
  }
  return "accepted";
}

TEST(Mlx5Launch, NoDeviceIsNamed) {
  const std::string m = refusal([] { check_mlx5_device({}, ""); });
  EXPECT_NE(m.find("needs an RDMA device"), std::string::npos) << m;
  EXPECT_NE(m.find("no mlx5 device"), std::string::npos) << m;
}

TEST(Mlx5Launch, UnknownDeviceNamesItAndWhatExists) {
  const std::string m = refusal([] { check_mlx5_device({"mlx5_0", "mlx5_1"}, "mlx5_7"); });
  EXPECT_NE(m.find("--device mlx5_7"), std::string::npos) << m;
  EXPECT_NE(m.find("mlx5_0, mlx5_1"), std::string::npos) << m;
  EXPECT_EQ(refusal([] { check_mlx5_device({}, "mlx5_2"); }).find("lists: none") == std::string::npos,
            false);
}

TEST(Mlx5Launch, PresentDeviceIsAccepted) {
  EXPECT_EQ(refusal([] { check_mlx5_device({"mlx5_0"}, ""); }), "accepted");
  EXPECT_EQ(refusal([] { check_mlx5_device({"mlx5_0", "mlx5_1"}, "mlx5_1"); }), "accepted");
}

TEST(Mlx5Launch, SingleRankSaysHowToLaunchTwo) {
  const std::string m = refusal([] { check_two_rank_launch("rate", env_of({}), false); });
  EXPECT_NE(m.find("single-rank launch"), std::string::npos) << m;
  EXPECT_NE(m.find("mpirun -np 2 -H node1,node2 dissect rate --provider mlx5"), std::string::npos)
      << m;
  EXPECT_NE(m.find("DISSECT_RANK=<0|1> DISSECT_WORLD_SIZE=2"), std::string::npos) << m;
}

TEST(Mlx5Launch, OtherWorldSizesAreRefused) {
  const std::string m = refusal([] {
    check_two_rank_launch("latency", env_of({{"DISSECT_RANK", "0"}, {"DISSECT_WORLD_SIZE", "3"}}),
                          false);
  });
  EXPECT_NE(m.find("this launch has 3"), std::string::npos) << m;
  // Open MPI's variables without an MPI build go through the environment launch: checked too.
  const std::string one = refusal([] {
    check_two_rank_launch("latency",
                          env_of({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}),
                          false);
  });
  EXPECT_NE(one.find("this launch has 1"), std::string::npos) << one;
}

TEST(Mlx5Launch, TwoRanksAndMpiLaunchesPass) {
  EXPECT_EQ(refusal([] {
              check_two_rank_launch(
                  "latency", env_of({{"DISSECT_RANK", "1"}, {"DISSECT_WORLD_SIZE", "2"}}), false);
            }),
            "accepted");
  // Under mpirun in an MPI build the size is checked after MPI_Init, by the session.
  EXPECT_EQ(refusal([] {
              check_two_rank_launch("latency",
                                    env_of({{"OMPI_COMM_WORLD_RANK", "0"},
                                            {"OMPI_COMM_WORLD_SIZE", "4"}}),
                                    true);
            }),
            "accepted");
}

}  // namespace
}  // namespace dissect::bench
