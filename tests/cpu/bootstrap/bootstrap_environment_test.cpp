// The environment bootstrap with N processes on localhost: the test forks one child per rank, each
// sets DISSECT_* variables, builds its bootstrap with create_bootstrap() and exchanges PeerInfo.
// A child reports failure through its exit code and its error text through a pipe.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bootstrap/environment.h"
#include "dissect/bootstrap/peer_info.h"

namespace dissect::bootstrap {
namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct Child {
  pid_t pid = -1;
  int pipe_fd = -1;
  int status = -1;
  std::string text;
};

// Forks one child per entry of `ranks`; each runs body(rank) after setting the variables from
// env(rank). Waits at most `limit_s` for all, kills (by pid) those still running.
std::vector<Child> run_children(const std::vector<int>& ranks,
                                const std::function<void(int)>& set_env,
                                const std::function<void(int)>& body, double limit_s = 30) {
  std::vector<Child> children(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      int code = 0;
      std::string error;
      try {
        set_env(ranks[i]);
        body(ranks[i]);
      } catch (const std::exception& e) {
        error = e.what();
        code = 1;
      }
      if (!error.empty()) (void)!::write(fds[1], error.data(), error.size());
      ::close(fds[1]);
      ::_exit(code);
    }
    ::close(fds[1]);
    children[i].pid = pid;
    children[i].pipe_fd = fds[0];
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  size_t done = 0;
  while (done < children.size()) {
    for (Child& c : children) {
      if (c.status != -1) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, WNOHANG) == c.pid) {
        c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ++done;
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (Child& c : children) {
        if (c.status != -1) continue;
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
        c.status = 999;  // hung
        ++done;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (Child& c : children) {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(c.pipe_fd, buffer, sizeof(buffer))) > 0) c.text.append(buffer, static_cast<size_t>(n));
    ::close(c.pipe_fd);
  }
  return children;
}

std::function<void(int)> dissect_env(int world, int port, double timeout_s, bool local_rank = false) {
  return [=](int rank) {
    ::setenv("DISSECT_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("DISSECT_WORLD_SIZE", std::to_string(world).c_str(), 1);
    ::setenv("DISSECT_BOOTSTRAP", ("127.0.0.1:" + std::to_string(port)).c_str(), 1);
    ::setenv("DISSECT_BOOTSTRAP_TIMEOUT", std::to_string(timeout_s).c_str(), 1);
    if (local_rank) {
      ::setenv("DISSECT_LOCAL_RANK", std::to_string(world - 1 - rank).c_str(), 1);
    } else {
      ::unsetenv("DISSECT_LOCAL_RANK");
    }
  };
}

std::vector<int> iota(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

void check(bool ok, const std::string& what) {
  if (!ok) throw Error(what);
}

// What every rank does: PeerInfo, all-to-all endpoints, regions, broadcast, barrier, repeated.
void exchange_and_check(int expected_rank, int world) {
  auto bs = create_bootstrap();
  check(bs->kind() == "environment", "kind " + bs->kind());
  check(bs->rank() == expected_rank && bs->world_size() == world, "rank/world " + bs->describe());
  check(bs->local_size() == world, "all PEs are on one host: " + bs->describe());
  const int me = bs->rank();
  for (int round = 0; round < 3; ++round) {
    nic::QpEndpoint ep;
    ep.qpn = 0x1000u * static_cast<uint32_t>(round + 1) + static_cast<uint32_t>(me);
    ep.lid = static_cast<uint16_t>(me + 10);
    for (int b = 0; b < 16; ++b) ep.gid[b] = static_cast<uint8_t>(me * 16 + b);
    nic::MemoryRegion mr;
    mr.address = reinterpret_cast<void*>(0x7f0000000000ull + 0x1000000ull * me);
    mr.length = 1u << (12 + me);
    mr.rkey = 0xa0000000u | static_cast<uint32_t>(me << 8 | round);
    const auto infos = exchange_peer_info(*bs, make_peer_info(*bs, {ep}, mr, "mlx5_" + std::to_string(me), me));
    check(infos.size() == static_cast<size_t>(world), "infos size");
    for (int r = 0; r < world; ++r) {
      const PeerInfo& p = infos[static_cast<size_t>(r)];
      const nic::QpEndpoint e = from_wire(p.endpoints[0]);
      check(e.qpn == 0x1000u * static_cast<uint32_t>(round + 1) + static_cast<uint32_t>(r) &&
                e.lid == r + 10 && e.gid[0] == r * 16 && e.gid[15] == r * 16 + 15,
            "endpoint of rank " + std::to_string(r));
      check(p.address == 0x7f0000000000ull + 0x1000000ull * r && p.length == (1u << (12 + r)) &&
                p.rkey == (0xa0000000u | static_cast<uint32_t>(r << 8 | round)),
            "region of rank " + std::to_string(r));
      check(std::string(p.nic) == "mlx5_" + std::to_string(r) && p.gpu == r &&
                p.host == host_name(),
            "devices of rank " + std::to_string(r));
    }
    std::vector<nic::QpEndpoint> mine(static_cast<size_t>(world));
    for (int p = 0; p < world; ++p) mine[static_cast<size_t>(p)].qpn = static_cast<uint32_t>(100 * me + p);
    const auto remote = exchange_qp_endpoints(*bs, mine);
    for (int p = 0; p < world; ++p) {
      check(remote[static_cast<size_t>(p)].qpn == static_cast<uint32_t>(100 * p + me),
            "all-to-all endpoint from rank " + std::to_string(p));
    }
    const int root = round % world;
    uint64_t token = me == root ? 0x5eed0000ull + static_cast<uint64_t>(round) : 0;
    broadcast_value(*bs, token, root);
    check(token == 0x5eed0000ull + static_cast<uint64_t>(round), "broadcast from " + std::to_string(root));
    bs->barrier();
    check(bs->allgather(nullptr, 0).empty(), "zero-byte allgather");
  }
}

class EnvironmentSizes : public ::testing::TestWithParam<int> {};

TEST_P(EnvironmentSizes, EveryRankSeesEveryPeer) {
  const int n = GetParam();
  const int port = free_port();
  const auto children = run_children(iota(n), dissect_env(n, port, 20),
                                     [n](int rank) { exchange_and_check(rank, n); });
  for (size_t i = 0; i < children.size(); ++i) {
    EXPECT_EQ(children[i].status, 0) << "rank " << i << ": " << children[i].text;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, EnvironmentSizes, ::testing::Values(1, 2, 3, 8));

TEST(Environment, LocalRankGivenOrComputedFromHosts) {
  const int port = free_port();
  // Four ranks, "hosts" a and b alternate; no DISSECT_LOCAL_RANK: numbered per host in rank order.
  const auto children = run_children(iota(4), dissect_env(4, port, 20), [](int rank) {
    LaunchEnvironment launch = read_launch_environment();
    Environment bs(launch, rank % 2 ? "host-b" : "host-a");
    check(bs.local_size() == 2, "local size " + std::to_string(bs.local_size()));
    check(bs.local_rank() == rank / 2, "local rank " + std::to_string(bs.local_rank()));
  });
  for (const Child& c : children) EXPECT_EQ(c.status, 0) << c.text;

  const int port2 = free_port();
  const auto given = run_children(iota(3), dissect_env(3, port2, 20, true), [](int rank) {
    auto bs = create_bootstrap();
    check(bs->local_rank() == 2 - rank, "DISSECT_LOCAL_RANK kept: " + bs->describe());
  });
  for (const Child& c : given) EXPECT_EQ(c.status, 0) << c.text;
}

TEST(Environment, OpenMpiAndSlurmRankVariables) {
  const int port = free_port();
  const auto ompi = run_children(iota(2), [port](int rank) {
    ::unsetenv("DISSECT_RANK");
    ::setenv("OMPI_COMM_WORLD_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank).c_str(), 1);
    ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
    ::setenv("DISSECT_BOOTSTRAP_PORT", std::to_string(port).c_str(), 1);
    ::setenv("DISSECT_BOOTSTRAP_TIMEOUT", "20", 1);
  }, [](int rank) {
    // Built without MPI here, so Open MPI's variables lead to the environment bootstrap.
    auto bs = create_bootstrap();
    check(bs->kind() == (have_mpi() ? "mpi" : "environment"), bs->describe());
    check(bs->rank() == rank && bs->world_size() == 2, bs->describe());
    bs->barrier();
  });
  for (const Child& c : ompi) EXPECT_EQ(c.status, 0) << c.text;

  const int port2 = free_port();
  const auto slurm = run_children(iota(3), [port2](int rank) {
    ::setenv("SLURM_PROCID", std::to_string(rank).c_str(), 1);
    ::setenv("SLURM_NTASKS", "3", 1);
    ::setenv("SLURM_LOCALID", std::to_string(rank).c_str(), 1);
    ::setenv("SLURM_NNODES", "1", 1);
    ::setenv("DISSECT_BOOTSTRAP", ("localhost:" + std::to_string(port2)).c_str(), 1);
  }, [](int rank) {
    auto bs = create_bootstrap(BootstrapOptions{BootstrapKind::environment, 20});
    check(bs->rank() == rank && bs->world_size() == 3 && bs->local_rank() == rank, bs->describe());
    const auto all = allgather_value(*bs, rank * 7);
    for (int r = 0; r < 3; ++r) check(all[static_cast<size_t>(r)] == r * 7, "slurm allgather");
  });
  for (const Child& c : slurm) EXPECT_EQ(c.status, 0) << c.text;
}

TEST(Environment, RankThatNeverArrivesIsNamedByEveryOther) {
  const int port = free_port();
  const auto start = std::chrono::steady_clock::now();
  // World of 3; rank 2 is never launched. Timeout 1 s.
  const auto children = run_children({0, 1}, dissect_env(3, port, 1.0),
                                     [](int) { create_bootstrap(); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 10.0);
  for (const Child& c : children) {
    EXPECT_EQ(c.status, 1) << c.text;
    EXPECT_NE(c.text.find("rank 2 to connect"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("timed out after 1 s"), std::string::npos) << c.text;
  }
  EXPECT_NE(children[1].text.find("rank 0 aborted"), std::string::npos) << children[1].text;
}

TEST(Environment, RankMissingFromACollectiveIsNamed) {
  const int port = free_port();
  // Everyone connects; rank 1 then skips the barrier and waits; the others time out naming it.
  const auto children = run_children(iota(3), dissect_env(3, port, 1.0), [](int rank) {
    auto bs = create_bootstrap();
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return;
    }
    bs->barrier();
  });
  EXPECT_EQ(children[0].status, 1);
  EXPECT_NE(children[0].text.find("waiting for rank 1's barrier #0"), std::string::npos) << children[0].text;
  EXPECT_EQ(children[2].status, 1);
  EXPECT_NE(children[2].text.find("rank 1's barrier #0"), std::string::npos) << children[2].text;
}

TEST(Environment, RankThatExitsIsNamed) {
  const int port = free_port();
  const auto children = run_children(iota(3), dissect_env(3, port, 5.0), [](int rank) {
    auto bs = create_bootstrap();
    if (rank == 2) ::_exit(0);  // gone without a word
    bs->barrier();
  });
  EXPECT_EQ(children[0].status, 1);
  EXPECT_NE(children[0].text.find("rank 2 closed its connection"), std::string::npos) << children[0].text;
  EXPECT_EQ(children[1].status, 1);
  EXPECT_NE(children[1].text.find("rank 2 closed its connection"), std::string::npos) << children[1].text;
}

TEST(Environment, MismatchedCollectivesAreNamed) {
  const int port = free_port();
  const auto children = run_children(iota(2), dissect_env(2, port, 5.0), [](int rank) {
    auto bs = create_bootstrap();
    if (rank == 0) {
      bs->barrier();
    } else {
      uint64_t v = 0;
      bs->allgather(&v, sizeof(v));
    }
  });
  for (const Child& c : children) {
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.text.find("allgather #0 (8 bytes)"), std::string::npos) << c.text;
    EXPECT_NE(c.text.find("barrier #0"), std::string::npos) << c.text;
  }
}

TEST(Environment, DuplicateRankAndWrongWorldSizeAreRefused) {
  const int port = free_port();
  const auto dup = run_children({0, 1, 1}, dissect_env(3, port, 5.0), [](int) { create_bootstrap(); });
  EXPECT_EQ(dup[0].status, 1);
  EXPECT_NE(dup[0].text.find("two PEs say rank 1"), std::string::npos) << dup[0].text;

  const int port2 = free_port();
  const auto wrong = run_children(iota(2), [port2](int rank) {
    dissect_env(rank == 0 ? 2 : 3, port2, 5.0)(rank);
  }, [](int) { create_bootstrap(); });
  EXPECT_EQ(wrong[0].status, 1);
  EXPECT_NE(wrong[0].text.find("world size 3, rank 0 with 2"), std::string::npos) << wrong[0].text;
  EXPECT_EQ(wrong[1].status, 1);
  EXPECT_NE(wrong[1].text.find("rank 0 aborted"), std::string::npos) << wrong[1].text;
}

TEST(Environment, NoRankZeroTimesOutNamingTheAddress) {
  const int port = free_port();
  const auto children = run_children({1}, dissect_env(2, port, 0.5), [](int) { create_bootstrap(); });
  EXPECT_EQ(children[0].status, 1);
  EXPECT_NE(children[0].text.find("waiting for rank 0 to listen on DISSECT_BOOTSTRAP=127.0.0.1:" +
                                  std::to_string(port)),
            std::string::npos)
      << children[0].text;
}

}  // namespace
}  // namespace dissect::bootstrap
