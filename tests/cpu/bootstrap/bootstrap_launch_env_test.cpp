// Launch variables: DISSECT_*, Open MPI's and Slurm's, and the errors for malformed values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "dissect/bootstrap/environment.h"
#include "dissect/bootstrap/mpi.h"

namespace dissect::bootstrap {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The InvalidArgument message of read_launch_environment for `vars` ("" when it did not throw).
std::string error_of(std::map<std::string, std::string> vars) {
  try {
    read_launch_environment(env_of(std::move(vars)));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchEnv, DissectVariables) {
  const auto l = read_launch_environment(env_of({{"DISSECT_RANK", "3"},
                                                 {"DISSECT_WORLD_SIZE", "4"},
                                                 {"DISSECT_LOCAL_RANK", "1"},
                                                 {"DISSECT_BOOTSTRAP", "node1:4000"},
                                                 {"DISSECT_BOOTSTRAP_TIMEOUT", "2.5"}}));
  EXPECT_EQ(l.source, RankSource::dissect);
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world_size, 4);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.host, "node1");
  EXPECT_EQ(l.port, 4000);
  EXPECT_TRUE(l.address_given);
  EXPECT_DOUBLE_EQ(l.timeout_s, 2.5);
}

TEST(LaunchEnv, Defaults) {
  const auto l = read_launch_environment(env_of({{"DISSECT_RANK", "0"}, {"DISSECT_WORLD_SIZE", "1"}}));
  EXPECT_EQ(l.local_rank, -1);
  EXPECT_EQ(l.host, "127.0.0.1");
  EXPECT_EQ(l.port, DEFAULT_BOOTSTRAP_PORT);
  EXPECT_FALSE(l.address_given);
  EXPECT_DOUBLE_EQ(l.timeout_s, DEFAULT_BOOTSTRAP_TIMEOUT_S);
  const auto p = read_launch_environment(
      env_of({{"DISSECT_RANK", "0"}, {"DISSECT_WORLD_SIZE", "2"}, {"DISSECT_BOOTSTRAP_PORT", "31000"}}));
  EXPECT_EQ(p.port, 31000);
}

TEST(LaunchEnv, Ipv6Address) {
  const auto l = read_launch_environment(
      env_of({{"DISSECT_RANK", "0"}, {"DISSECT_WORLD_SIZE", "2"}, {"DISSECT_BOOTSTRAP", "[fe80::1]:29600"}}));
  EXPECT_EQ(l.host, "fe80::1");
  EXPECT_EQ(l.port, 29600);
}

TEST(LaunchEnv, OpenMpiVariables) {
  const auto l = read_launch_environment(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                                                 {"OMPI_COMM_WORLD_SIZE", "8"},
                                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                                 {"DISSECT_BOOTSTRAP", "node1:29517"}}));
  EXPECT_EQ(l.source, RankSource::open_mpi);
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
}

TEST(LaunchEnv, SlurmVariables) {
  const auto l = read_launch_environment(env_of(
      {{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "0"}, {"SLURM_NNODES", "1"}}));
  EXPECT_EQ(l.source, RankSource::slurm);
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.world_size, 4);
  EXPECT_EQ(l.local_rank, 0);
  EXPECT_EQ(l.host, "127.0.0.1");
}

TEST(LaunchEnv, DissectRankWinsOverLaunchers) {
  const auto l = read_launch_environment(env_of({{"DISSECT_RANK", "1"},
                                                 {"DISSECT_WORLD_SIZE", "2"},
                                                 {"OMPI_COMM_WORLD_RANK", "0"},
                                                 {"OMPI_COMM_WORLD_SIZE", "2"},
                                                 {"SLURM_PROCID", "0"}}));
  EXPECT_EQ(l.source, RankSource::dissect);
  EXPECT_EQ(l.rank, 1);
}

TEST(LaunchEnv, MalformedValuesNameTheVariableAndValue) {
  const std::map<std::string, std::string> ok = {{"DISSECT_RANK", "1"}, {"DISSECT_WORLD_SIZE", "4"}};
  auto with = [&](const std::string& k, const std::string& v) {
    auto m = ok;
    m[k] = v;
    return m;
  };
  struct Case {
    std::map<std::string, std::string> vars;
    std::string expected;
  } cases[] = {
      {with("DISSECT_RANK", "abc"), "DISSECT_RANK='abc' is not an integer"},
      {with("DISSECT_RANK", ""), "DISSECT_RANK='' is not an integer"},
      {with("DISSECT_RANK", "1x"), "DISSECT_RANK='1x' is not an integer"},
      {with("DISSECT_RANK", " 1"), "DISSECT_RANK=' 1' is not an integer"},
      {with("DISSECT_RANK", "4"), "DISSECT_RANK='4' is out of range for DISSECT_WORLD_SIZE='4' (0..3)"},
      {with("DISSECT_RANK", "-1"), "DISSECT_RANK='-1' is out of range"},
      {with("DISSECT_RANK", "99999999999999999999"), "DISSECT_RANK='99999999999999999999' is not an integer"},
      {with("DISSECT_WORLD_SIZE", "0"), "DISSECT_WORLD_SIZE='0' is out of range 1..65536"},
      {with("DISSECT_WORLD_SIZE", "two"), "DISSECT_WORLD_SIZE='two' is not an integer"},
      {with("DISSECT_LOCAL_RANK", "4"), "DISSECT_LOCAL_RANK='4' is out of range"},
      {with("DISSECT_BOOTSTRAP", "node1"), "DISSECT_BOOTSTRAP='node1' is not <host>:<port>"},
      {with("DISSECT_BOOTSTRAP", ":29517"), "DISSECT_BOOTSTRAP=':29517' has no host"},
      {with("DISSECT_BOOTSTRAP", "node1:"), "DISSECT_BOOTSTRAP='node1:': port '' is not an integer"},
      {with("DISSECT_BOOTSTRAP", "node1:http"), "DISSECT_BOOTSTRAP='node1:http': port 'http'"},
      {with("DISSECT_BOOTSTRAP", "node1:70000"), "DISSECT_BOOTSTRAP='node1:70000': port 70000 is not in 1..65535"},
      {with("DISSECT_BOOTSTRAP", "node1:0"), "port 0 is not in 1..65535"},
      {with("DISSECT_BOOTSTRAP", "fe80::1:29517"), "is not <host>:<port>"},
      {with("DISSECT_BOOTSTRAP", "[fe80::1]29517"), "is not [<IPv6 address>]:<port>"},
      {with("DISSECT_BOOTSTRAP_PORT", "65536"), "DISSECT_BOOTSTRAP_PORT='65536' is out of range 1..65535"},
      {with("DISSECT_BOOTSTRAP_TIMEOUT", "0"), "DISSECT_BOOTSTRAP_TIMEOUT='0' is not a positive number"},
      {with("DISSECT_BOOTSTRAP_TIMEOUT", "soon"), "DISSECT_BOOTSTRAP_TIMEOUT='soon'"},
      {with("DISSECT_BOOTSTRAP_TIMEOUT", "nan"), "DISSECT_BOOTSTRAP_TIMEOUT='nan'"},
      {{{"DISSECT_RANK", "0"}}, "DISSECT_RANK='0' is set but DISSECT_WORLD_SIZE is not"},
      {{{"DISSECT_WORLD_SIZE", "2"}}, "DISSECT_WORLD_SIZE='2' is set but DISSECT_RANK is not"},
      {{}, "no launch variables"},
      {{{"OMPI_COMM_WORLD_RANK", "0"}}, "OMPI_COMM_WORLD_RANK='0' is set but OMPI_COMM_WORLD_SIZE is not"},
      {{{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}, "SLURM_PROCID='x' is not an integer"},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_LOCALID", "2"}}, "SLURM_LOCALID='2' is out of range"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.vars);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "', got '" << message << "'";
  }
}

TEST(LaunchEnv, SeveralNodesNeedAnAddress) {
  const std::string ompi = error_of({{"OMPI_COMM_WORLD_RANK", "0"},
                                     {"OMPI_COMM_WORLD_SIZE", "4"},
                                     {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_NE(ompi.find("span several nodes (OMPI_COMM_WORLD_LOCAL_SIZE=2 < OMPI_COMM_WORLD_SIZE=4)"),
            std::string::npos) << ompi;
  EXPECT_NE(ompi.find("set DISSECT_BOOTSTRAP=<host of rank 0>:<port>"), std::string::npos) << ompi;
  const std::string slurm = error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_NNODES", "2"}});
  EXPECT_NE(slurm.find("SLURM_NNODES=2"), std::string::npos) << slurm;
  EXPECT_EQ(error_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_NNODES", "2"},
                      {"DISSECT_BOOTSTRAP", "node1:29517"}}),
            "");
}

TEST(LaunchEnv, PresenceAndKinds) {
  EXPECT_FALSE(launch_environment_present(env_of({})));
  EXPECT_TRUE(launch_environment_present(env_of({{"SLURM_PROCID", "0"}})));
  EXPECT_TRUE(launch_environment_present(env_of({{"OMPI_COMM_WORLD_RANK", "0"}})));
  EXPECT_EQ(bootstrap_kind_from_string("mpi"), BootstrapKind::mpi);
  EXPECT_EQ(bootstrap_kind_from_string("in-process"), BootstrapKind::in_process);
  EXPECT_THROW(bootstrap_kind_from_string("pmix"), InvalidArgument);
}

// In this process (launched by ctest, not by a launcher) create_bootstrap gives one PE.
TEST(CreateBootstrap, SinglePeWithoutLaunchVariables) {
  for (const char* v : {"DISSECT_RANK", "DISSECT_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "SLURM_PROCID", "PMI_SIZE", "PMIX_RANK"}) {
    ::unsetenv(v);
  }
  auto bs = create_bootstrap();
  EXPECT_EQ(bs->kind(), "in-process");
  EXPECT_EQ(bs->rank(), 0);
  EXPECT_EQ(bs->world_size(), 1);
  bs->barrier();
  EXPECT_EQ(bs->describe(), "in-process: rank 0 of 1 (local 0 of 1)");
}

TEST(CreateBootstrap, MalformedVariableReachesTheCaller) {
  ::setenv("DISSECT_RANK", "zero", 1);
  ::setenv("DISSECT_WORLD_SIZE", "2", 1);
  try {
    create_bootstrap();
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("DISSECT_RANK='zero'"), std::string::npos) << e.what();
  }
  ::unsetenv("DISSECT_RANK");
  ::unsetenv("DISSECT_WORLD_SIZE");
}

TEST(CreateBootstrap, MpiRequestedWithoutMpiSaysSo) {
  if (have_mpi()) GTEST_SKIP() << "built with MPI";
  try {
    create_bootstrap(BootstrapOptions{BootstrapKind::mpi, 0});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without MPI"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dissect::bootstrap
