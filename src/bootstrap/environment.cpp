// The environment bootstrap: a star of TCP connections around rank 0.
#include "dissect/bootstrap/environment.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include "dissect/bootstrap/peer_info.h"

namespace dissect::bootstrap {
namespace {

using Clock = std::chrono::steady_clock;

// Frames are host byte order: a peer of the other order fails the magic check with a clear error.
inline constexpr uint32_t FRAME_MAGIC = 0x46424344;  // "DCBF"
inline constexpr uint32_t PROTOCOL_VERSION = 1;
inline constexpr uint64_t MAX_FRAME_BYTES = 1ull << 30;

enum Op : uint32_t {
  OP_HELLO = 1,
  OP_WELCOME = 2,
  OP_ALLGATHER = 3,
  OP_BARRIER = 4,
  OP_BROADCAST = 5,
  OP_ABORT = 6,          // payload: rank 0's error text
  OP_ABORT_TIMEOUT = 7,  // same, and the error was a timeout
};

const char* op_name(uint32_t op) {
  switch (op) {
    case OP_HELLO: return "hello";
    case OP_WELCOME: return "welcome";
    case OP_ALLGATHER: return "allgather";
    case OP_BARRIER: return "barrier";
    case OP_BROADCAST: return "broadcast";
    case OP_ABORT: case OP_ABORT_TIMEOUT: return "abort";
  }
  return "unknown op";
}

struct FrameHeader {
  uint32_t magic;
  uint32_t op;
  uint64_t sequence;  // collective number on the sender, from 0 (hello/welcome/abort: 0)
  uint64_t length;    // payload bytes that follow
  uint64_t size;      // the collective's bytes per PE (allgather, broadcast)
  int32_t root;       // broadcast root
  uint32_t reserved;
};
static_assert(sizeof(FrameHeader) == 40);

struct Hello {
  uint32_t version;
  int32_t rank;
  int32_t world_size;
  int32_t local_rank;  // -1 = compute from host names
  char host[64];
};
static_assert(sizeof(Hello) == 80);

struct Welcome {
  int32_t local_rank;
  int32_t local_size;
};

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count() + 1, 1 << 30));
}

// Waits for `events` on fd until the deadline. False on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = remaining_ms(deadline);
    const int n = ::poll(&p, 1, ms);
    if (n > 0) return true;
    if (n == 0) {
      if (Clock::now() >= deadline) return false;
      continue;
    }
    if (errno != EINTR) throw Error(std::string("poll: ") + std::strerror(errno));
  }
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

enum class Io { ok, timeout, closed };

// Sends everything; on a timeout or a closed peer returns that, on another error throws.
Io send_all(int fd, const void* data, size_t bytes, Clock::time_point deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_fd(fd, POLLOUT, deadline)) return Io::timeout;
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return Io::closed;
    throw Error(std::string("send: ") + std::strerror(errno));
  }
  return Io::ok;
}

Io recv_all(int fd, void* data, size_t bytes, Clock::time_point deadline) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Io::closed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_fd(fd, POLLIN, deadline)) return Io::timeout;
      continue;
    }
    if (errno == ECONNRESET) return Io::closed;
    throw Error(std::string("recv: ") + std::strerror(errno));
  }
  return Io::ok;
}

struct Frame {
  FrameHeader header{};
  std::vector<uint8_t> payload;
};

std::string frame_text(const FrameHeader& h) {
  std::ostringstream out;
  out << op_name(h.op) << " #" << h.sequence;
  if (h.op == OP_ALLGATHER) out << " (" << h.size << " bytes)";
  if (h.op == OP_BROADCAST) out << " (" << h.size << " bytes from rank " << h.root << ")";
  return out.str();
}

std::string endpoint_text(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

struct AddressList {
  addrinfo* list = nullptr;
  ~AddressList() {
    if (list) ::freeaddrinfo(list);
  }
};

// Resolves host:port; throws naming DISSECT_BOOTSTRAP when the host does not resolve.
void resolve(const std::string& host, int port, int flags, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  const std::string service = std::to_string(port);
  const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &out.list);
  if (rc != 0 || !out.list) {
    throw InvalidArgument("DISSECT_BOOTSTRAP host '" + host + "' does not resolve: " +
                          ::gai_strerror(rc));
  }
}

bool is_loopback(const sockaddr* a) {
  if (a->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr) >> 24) == 127;
  }
  if (a->sa_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr);
  }
  return false;
}

}  // namespace

struct Environment::State {
  LaunchEnvironment launch;
  std::string host_id;
  int local_rank = 0;
  int local_size = 1;
  uint64_t sequence = 0;           // next collective number
  std::string failed;              // set after a failure: later calls throw it
  std::vector<Fd> peers;           // rank 0: one connection per rank (peers[0] unused)
  std::vector<Fd> refused;         // rank 0: PEs whose hello it refused (told why on abort)
  Fd root;                         // other ranks: the connection to rank 0

  std::string who() const { return "bootstrap rank " + std::to_string(launch.rank); }
  std::string rendezvous() const { return endpoint_text(launch.host, launch.port); }
  double timeout() const { return launch.timeout_s; }
  // Peers wait longer than rank 0, so that rank 0's message (which names the missing rank)
  // reaches them before their own, vaguer, timeout fires.
  double peer_timeout() const { return launch.timeout_s * 1.1 + 1.0; }

  [[noreturn]] void fail(const std::string& message, bool timeout) {
    failed = message;
    if (launch.rank == 0) abort_peers(message, timeout);
    if (timeout) throw BootstrapTimeout(message);
    throw Error(message);
  }

  // Rank 0: tells every connected peer why the group failed (best effort, short deadline).
  void abort_peers(const std::string& message, bool timeout) {
    FrameHeader h{FRAME_MAGIC, timeout ? OP_ABORT_TIMEOUT : OP_ABORT, 0, message.size(), 0, 0, 0};
    const auto deadline = deadline_after(1.0);
    for (std::vector<Fd>* list : {&peers, &refused}) {
      for (Fd& fd : *list) {
        if (!fd) continue;
        try {
          if (send_all(fd.get(), &h, sizeof(h), deadline) == Io::ok) {
            send_all(fd.get(), message.data(), message.size(), deadline);
          }
        } catch (const Error&) {
          // That peer is gone too; the others still get the message.
        }
        ::shutdown(fd.get(), SHUT_WR);
      }
    }
  }

  void send_frame(int fd, const FrameHeader& h, const void* payload, int peer, const char* what) {
    const auto deadline = deadline_after(timeout());
    Io io = send_all(fd, &h, sizeof(h), deadline);
    if (io == Io::ok && h.length > 0) io = send_all(fd, payload, h.length, deadline);
    if (io == Io::closed) {
      fail(who() + ": rank " + std::to_string(peer) + " closed its connection while sending it " +
               what + " (it exited or failed)", false);
    }
    if (io == Io::timeout) {
      fail(who() + ": timed out after " + seconds(timeout()) + " sending " + what + " to rank " +
               std::to_string(peer), true);
    }
  }

  // Receives one frame from `peer` (rank 0 when this is not rank 0). `waiting_for` completes
  // "timed out ... waiting for ...".
  Frame recv_frame(int fd, int peer, double wait_s, const std::string& waiting_for) {
    const auto deadline = deadline_after(wait_s);
    Frame f;
    Io io = recv_all(fd, &f.header, sizeof(f.header), deadline);
    if (io == Io::ok) {
      if (f.header.magic != FRAME_MAGIC) {
        fail(who() + ": rank " + std::to_string(peer) + " sent a frame with magic " +
                 hex(f.header.magic) + " while waiting for " + waiting_for +
                 " (not a dissect bootstrap, another version, or another byte order)", false);
      }
      if (f.header.length > MAX_FRAME_BYTES) {
        fail(who() + ": rank " + std::to_string(peer) + " announced a " +
                 std::to_string(f.header.length) + "-byte frame (limit 1 GiB)", false);
      }
      f.payload.resize(f.header.length);
      if (f.header.length > 0) io = recv_all(fd, f.payload.data(), f.payload.size(), deadline);
    }
    if (io == Io::closed) {
      fail(who() + ": rank " + std::to_string(peer) + " closed its connection while this rank " +
               "waited for " + waiting_for + " (it exited or failed)", false);
    }
    if (io == Io::timeout) {
      fail(who() + ": timed out after " + seconds(wait_s) + " waiting for " + waiting_for, true);
    }
    if (f.header.op == OP_ABORT || f.header.op == OP_ABORT_TIMEOUT) {
      const std::string text(f.payload.begin(), f.payload.end());
      fail(who() + ": rank 0 aborted the bootstrap: " + text, f.header.op == OP_ABORT_TIMEOUT);
    }
    return f;
  }

  static std::string seconds(double s) {
    std::ostringstream out;
    out << s << " s";
    return out.str();
  }

  void check_frame(const Frame& f, const FrameHeader& expected, int peer) {
    const FrameHeader& h = f.header;
    if (h.op != expected.op || h.sequence != expected.sequence || h.size != expected.size ||
        h.root != expected.root) {
      fail(who() + ": rank " + std::to_string(peer) + " is in " + frame_text(h) +
               " while rank " + std::to_string(launch.rank) + " is in " + frame_text(expected) +
               ": every PE must call the same collectives in the same order", false);
    }
  }

  void connect_root_side();
  void connect_peer_side();
  std::vector<uint8_t> collective(uint32_t op, const void* data, size_t size, int root);
};

namespace {

std::string missing_ranks(const std::vector<Fd>& peers) {
  std::ostringstream out;
  int count = 0;
  for (size_t r = 1; r < peers.size(); ++r) {
    if (!peers[r]) out << (count++ ? ", " : "") << r;
  }
  return (count > 1 ? "ranks " : "rank ") + out.str();
}

}  // namespace

void Environment::State::connect_root_side() {
  const int n = launch.world_size;
  peers.resize(static_cast<size_t>(n));
  std::vector<Hello> hellos(static_cast<size_t>(n));
  hellos[0].rank = 0;
  hellos[0].local_rank = launch.local_rank;
  std::snprintf(hellos[0].host, sizeof(hellos[0].host), "%s", host_id.c_str());
  if (n > 1) {
    AddressList addresses;
    resolve(launch.host, launch.port, AI_PASSIVE, addresses);
    const addrinfo* a = addresses.list;
    // Bind the given address when it is a loopback one; otherwise every interface, since the name
    // others use for this node may resolve here to another local address (127.0.1.1 on Debian).
    sockaddr_storage bind_address{};
    socklen_t bind_length = static_cast<socklen_t>(a->ai_addrlen);
    std::memcpy(&bind_address, a->ai_addr, a->ai_addrlen);
    if (!is_loopback(a->ai_addr)) {
      if (a->ai_family == AF_INET) {
        reinterpret_cast<sockaddr_in*>(&bind_address)->sin_addr.s_addr = htonl(INADDR_ANY);
      } else if (a->ai_family == AF_INET6) {
        reinterpret_cast<sockaddr_in6*>(&bind_address)->sin6_addr = in6addr_any;
      }
    }
    Fd listener(::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener) throw Error(who() + ": socket: " + std::strerror(errno));
    const int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&bind_address), bind_length) != 0) {
      const int e = errno;
      throw Error(who() + ": cannot listen on DISSECT_BOOTSTRAP=" + rendezvous() + ": bind: " +
                  std::strerror(e) +
                  (e == EADDRINUSE ? " (another job uses this port: pick another with "
                                     "DISSECT_BOOTSTRAP or DISSECT_BOOTSTRAP_PORT)"
                                   : ""));
    }
    if (::listen(listener.get(), n) != 0) {
      throw Error(who() + ": listen on " + rendezvous() + ": " + std::strerror(errno));
    }
    set_nonblocking(listener.get());

    const auto deadline = deadline_after(timeout());
    int arrived = 1;
    while (arrived < n) {
      if (!wait_fd(listener.get(), POLLIN, deadline)) {
        std::ostringstream msg;
        msg << who() << " (listening on " << rendezvous() << "): timed out after "
            << seconds(timeout()) << " waiting for " << missing_ranks(peers) << " to connect ("
            << arrived << " of " << n << " PEs arrived); check that every rank was launched with "
            << "the same DISSECT_BOOTSTRAP and world size " << n;
        fail(msg.str(), true);
      }
      Fd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!conn) {
        if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
        fail(who() + ": accept on " + rendezvous() + ": " + std::strerror(errno), false);
      }
      ::setsockopt(conn.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      FrameHeader h{};
      Hello hello{};
      Io io = recv_all(conn.get(), &h, sizeof(h), deadline);
      if (io == Io::ok && (h.magic != FRAME_MAGIC || h.op != OP_HELLO || h.length != sizeof(Hello))) {
        // Not one of ours (a port scanner, another program): drop it and keep waiting.
        std::fprintf(stderr, "%s: dropped a connection that did not start with a dissect hello\n",
                     who().c_str());
        continue;
      }
      if (io == Io::ok) io = recv_all(conn.get(), &hello, sizeof(hello), deadline);
      if (io != Io::ok) continue;  // the peer vanished mid-hello; the deadline still applies
      hello.host[sizeof(hello.host) - 1] = '\0';
      const std::string from = "a PE on host '" + std::string(hello.host) + "'";
      if (hello.version != PROTOCOL_VERSION) {
        refused.push_back(std::move(conn));
        fail(who() + ": " + from + " speaks bootstrap protocol " + std::to_string(hello.version) +
                 ", this rank " + std::to_string(PROTOCOL_VERSION) +
                 ": build every PE from the same dissect", false);
      }
      if (hello.world_size != n) {
        refused.push_back(std::move(conn));
        fail(who() + ": rank " + std::to_string(hello.rank) + " (" + from + ") was launched with "
                 "world size " + std::to_string(hello.world_size) + ", rank 0 with " +
                 std::to_string(n), false);
      }
      if (hello.rank < 1 || hello.rank >= n) {
        refused.push_back(std::move(conn));
        fail(who() + ": " + from + " says rank " + std::to_string(hello.rank) +
                 ", not in 1.." + std::to_string(n - 1), false);
      }
      if (peers[static_cast<size_t>(hello.rank)]) {
        refused.push_back(std::move(conn));
        fail(who() + ": two PEs say rank " + std::to_string(hello.rank) + " (the second from " +
                 from + "): every PE needs its own rank", false);
      }
      peers[static_cast<size_t>(hello.rank)] = std::move(conn);
      hellos[static_cast<size_t>(hello.rank)] = hello;
      ++arrived;
    }
  }

  // Local ranks: given ones are kept; the others are numbered per host in rank order.
  std::map<std::string, int> per_host;
  std::vector<Welcome> welcomes(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const Hello& h = hellos[static_cast<size_t>(r)];
    const int index = per_host[h.host]++;
    welcomes[static_cast<size_t>(r)].local_rank = h.local_rank >= 0 ? h.local_rank : index;
  }
  for (int r = 0; r < n; ++r) {
    welcomes[static_cast<size_t>(r)].local_size = per_host[hellos[static_cast<size_t>(r)].host];
  }
  local_rank = welcomes[0].local_rank;
  local_size = welcomes[0].local_size;
  for (int r = 1; r < n; ++r) {
    FrameHeader h{FRAME_MAGIC, OP_WELCOME, 0, sizeof(Welcome), 0, 0, 0};
    send_frame(peers[static_cast<size_t>(r)].get(), h, &welcomes[static_cast<size_t>(r)], r, "its welcome");
  }
}

void Environment::State::connect_peer_side() {
  const auto deadline = deadline_after(timeout());
  std::string last_error = "no attempt";
  for (;;) {
    AddressList addresses;
    resolve(launch.host, launch.port, 0, addresses);
    for (const addrinfo* a = addresses.list; a && !root; a = a->ai_next) {
      Fd fd(::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
      if (!fd) continue;
      int rc = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
      if (rc != 0 && errno == EINPROGRESS) {
        if (!wait_fd(fd.get(), POLLOUT, deadline)) {
          last_error = "connect did not complete";
          continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      }
      if (rc == 0) {
        root = std::move(fd);
      } else {
        last_error = std::strerror(errno);
      }
    }
    if (root) break;
    if (Clock::now() >= deadline) {
      fail(who() + ": timed out after " + seconds(timeout()) + " waiting for rank 0 to listen on " +
               "DISSECT_BOOTSTRAP=" + rendezvous() + " (last error: " + last_error +
               "); is rank 0 running, and is that its address?", true);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, remaining_ms(deadline))));
  }
  const int one = 1;
  ::setsockopt(root.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  Hello hello{};
  hello.version = PROTOCOL_VERSION;
  hello.rank = launch.rank;
  hello.world_size = launch.world_size;
  hello.local_rank = launch.local_rank;
  std::snprintf(hello.host, sizeof(hello.host), "%s", host_id.c_str());
  FrameHeader h{FRAME_MAGIC, OP_HELLO, 0, sizeof(Hello), 0, 0, 0};
  send_frame(root.get(), h, &hello, 0, "its hello");
  const Frame f = recv_frame(root.get(), 0, peer_timeout(),
                             "rank 0's welcome (rank 0 waits until every rank has connected)");
  if (f.header.op != OP_WELCOME || f.payload.size() != sizeof(Welcome)) {
    fail(who() + ": rank 0 answered the hello with " + frame_text(f.header) + ", not a welcome",
         false);
  }
  Welcome w;
  std::memcpy(&w, f.payload.data(), sizeof(w));
  local_rank = w.local_rank;
  local_size = w.local_size;
}

std::vector<uint8_t> Environment::State::collective(uint32_t op, const void* data, size_t size,
                                                    int root_rank) {
  if (!failed.empty()) throw Error(who() + ": the bootstrap failed earlier: " + failed);
  const int n = launch.world_size;
  const int me = launch.rank;
  const FrameHeader mine{FRAME_MAGIC, op, sequence++, 0, size, root_rank, 0};
  const std::string what = frame_text(mine);
  std::vector<uint8_t> result;
  if (op == OP_ALLGATHER) {
    result.resize(size * static_cast<size_t>(n));
    if (size > 0) std::memcpy(result.data() + size * static_cast<size_t>(me), data, size);
  } else if (op == OP_BROADCAST) {
    result.resize(size);
    if (me == root_rank && size > 0) std::memcpy(result.data(), data, size);
  }
  if (n == 1) return result;

  if (me == 0) {
    // Gather every rank's contribution (or arrival), in rank order, under one deadline.
    const auto deadline = deadline_after(timeout());
    for (int r = 1; r < n; ++r) {
      const double left = std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
      Frame f = recv_frame(peers[static_cast<size_t>(r)].get(), r, left > 0 ? left : 1e-3,
                           "rank " + std::to_string(r) + "'s " + what + " (" +
                               (r > 1 ? "ranks 1.." + std::to_string(r - 1) + " arrived" : "the first peer") +
                               ")");
      check_frame(f, mine, r);
      const size_t expected = op == OP_ALLGATHER || (op == OP_BROADCAST && r == root_rank) ? size : 0;
      if (f.payload.size() != expected) {
        fail(who() + ": rank " + std::to_string(r) + " sent " + std::to_string(f.payload.size()) +
                 " bytes for " + what + ", expected " + std::to_string(expected), false);
      }
      if (op == OP_ALLGATHER && size > 0) {
        std::memcpy(result.data() + size * static_cast<size_t>(r), f.payload.data(), size);
      }
      if (op == OP_BROADCAST && r == root_rank && size > 0) {
        std::memcpy(result.data(), f.payload.data(), size);
      }
    }
    FrameHeader out = mine;
    out.length = result.size();
    for (int r = 1; r < n; ++r) {
      send_frame(peers[static_cast<size_t>(r)].get(), out, result.data(), r,
                 ("the result of " + what).c_str());
    }
    return result;
  }

  FrameHeader out = mine;
  const bool carries = op == OP_ALLGATHER || (op == OP_BROADCAST && me == root_rank);
  out.length = carries ? size : 0;
  send_frame(root.get(), out, data, 0, what.c_str());
  Frame f = recv_frame(root.get(), 0, peer_timeout(),
                       "rank 0 to complete " + what + " (rank 0 waits for every rank)");
  check_frame(f, mine, 0);
  if (f.payload.size() != result.size()) {
    fail(who() + ": rank 0 sent " + std::to_string(f.payload.size()) + " bytes for " + what +
             ", expected " + std::to_string(result.size()), false);
  }
  return std::move(f.payload);
}

Environment::Environment(const LaunchEnvironment& launch, std::string host_id)
    : state_(std::make_unique<State>()) {
  if (launch.world_size < 1 || launch.rank < 0 || launch.rank >= launch.world_size) {
    throw InvalidArgument("environment bootstrap: rank " + std::to_string(launch.rank) +
                          " is not in 0.." + std::to_string(launch.world_size - 1));
  }
  if (!(launch.timeout_s > 0)) {
    throw InvalidArgument("environment bootstrap: timeout " + std::to_string(launch.timeout_s) +
                          " s is not positive");
  }
  state_->launch = launch;
  state_->host_id = host_id.empty() ? host_name() : std::move(host_id);
  if (launch.rank == 0) {
    state_->connect_root_side();
  } else {
    state_->connect_peer_side();
  }
}

Environment::~Environment() = default;

int Environment::rank() const { return state_->launch.rank; }
int Environment::world_size() const { return state_->launch.world_size; }
int Environment::local_rank() const { return state_->local_rank; }
int Environment::local_size() const { return state_->local_size; }

std::string Environment::describe() const {
  std::ostringstream out;
  out << Bootstrap::describe() << " on " << state_->host_id << ", rendezvous "
      << state_->rendezvous() << ", ranks from " << to_string(state_->launch.source);
  return out.str();
}

std::vector<uint8_t> Environment::allgather(const void* data, size_t bytes) {
  return state_->collective(OP_ALLGATHER, data, bytes, 0);
}

void Environment::barrier() { state_->collective(OP_BARRIER, nullptr, 0, 0); }

void Environment::broadcast(void* data, size_t bytes, int root) {
  if (root < 0 || root >= world_size()) {
    throw InvalidArgument("broadcast root " + std::to_string(root) + " is not a rank of " +
                          std::to_string(world_size()));
  }
  std::vector<uint8_t> result = state_->collective(OP_BROADCAST, data, bytes, root);
  if (rank() != root && bytes > 0) std::memcpy(data, result.data(), bytes);
}

}  // namespace dissect::bootstrap
