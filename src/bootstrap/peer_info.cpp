#include "dissect/bootstrap/peer_info.h"

#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

namespace dissect::bootstrap {

WireEndpoint to_wire(const nic::QpEndpoint& endpoint) {
  WireEndpoint w{};
  w.qpn = endpoint.qpn;
  w.nic_id = endpoint.nic_id;
  w.lid = endpoint.lid;
  std::memcpy(w.gid, endpoint.gid, sizeof(w.gid));
  return w;
}

nic::QpEndpoint from_wire(const WireEndpoint& wire) {
  nic::QpEndpoint e;
  e.qpn = wire.qpn;
  e.nic_id = wire.nic_id;
  e.lid = wire.lid;
  std::memcpy(e.gid, wire.gid, sizeof(e.gid));
  return e;
}

namespace {

template <size_t N>
void copy_string(char (&out)[N], const std::string& text) {
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

std::string entry_name(int index) { return "PeerInfo from rank " + std::to_string(index); }

}  // namespace

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

PeerInfo make_peer_info(const Bootstrap& bootstrap, const nic::QpEndpoint& endpoint,
                        const nic::MemoryRegion& region, const std::string& nic, int gpu) {
  PeerInfo info;
  info.rank = bootstrap.rank();
  info.local_rank = bootstrap.local_rank();
  info.endpoint = to_wire(endpoint);
  info.rkey = region.rkey;
  info.address = reinterpret_cast<uint64_t>(region.address);
  info.length = region.length;
  copy_string(info.host, host_name());
  copy_string(info.nic, nic);
  info.gpu = gpu;
  return info;
}

std::vector<PeerInfo> exchange_peer_info(Bootstrap& bootstrap, const PeerInfo& mine) {
  std::vector<PeerInfo> all = allgather_value(bootstrap, mine);
  for (size_t i = 0; i < all.size(); ++i) {
    const PeerInfo& p = all[i];
    if (p.magic != PEER_INFO_MAGIC) {
      throw Error(entry_name(static_cast<int>(i)) + " has magic " + hex(p.magic) + ", expected " +
                  hex(PEER_INFO_MAGIC) + " (not a dissect PE, or another byte order)");
    }
    if (p.version != PEER_INFO_VERSION || p.size != sizeof(PeerInfo)) {
      throw Error(entry_name(static_cast<int>(i)) + " is version " + std::to_string(p.version) +
                  " size " + std::to_string(p.size) + ", this PE speaks version " +
                  std::to_string(PEER_INFO_VERSION) + " size " + std::to_string(sizeof(PeerInfo)) +
                  ": build every PE from the same dissect");
    }
    if (p.rank != static_cast<int32_t>(i)) {
      throw Error(entry_name(static_cast<int>(i)) + " says rank " + std::to_string(p.rank) +
                  ": make it with make_peer_info() on that PE");
    }
    if (p.host[sizeof(p.host) - 1] != '\0' || p.nic[sizeof(p.nic) - 1] != '\0') {
      throw Error(entry_name(static_cast<int>(i)) + " has an unterminated host or nic name");
    }
  }
  return all;
}

std::vector<nic::QpEndpoint> exchange_qp_endpoints(Bootstrap& bootstrap,
                                                   const std::vector<nic::QpEndpoint>& mine) {
  const size_t n = static_cast<size_t>(bootstrap.world_size());
  if (mine.size() != n) {
    throw InvalidArgument("exchange_qp_endpoints: " + std::to_string(mine.size()) +
                          " endpoints given, one per PE (" + std::to_string(n) + ") needed");
  }
  std::vector<WireEndpoint> wire(n);
  for (size_t p = 0; p < n; ++p) wire[p] = to_wire(mine[p]);
  const std::vector<uint8_t> bytes = bootstrap.allgather(wire.data(), n * sizeof(WireEndpoint));
  // bytes holds, for each PE q, its n endpoints; this PE needs entry [q][rank] of each.
  const size_t me = static_cast<size_t>(bootstrap.rank());
  std::vector<nic::QpEndpoint> remote(n);
  for (size_t q = 0; q < n; ++q) {
    WireEndpoint w;
    std::memcpy(&w, bytes.data() + (q * n + me) * sizeof(WireEndpoint), sizeof(w));
    remote[q] = from_wire(w);
  }
  return remote;
}

std::vector<RemoteRegion> exchange_regions(Bootstrap& bootstrap, const nic::MemoryRegion& mine) {
  RemoteRegion r;
  r.address = reinterpret_cast<uint64_t>(mine.address);
  r.length = mine.length;
  r.rkey = mine.rkey;
  return allgather_value(bootstrap, r);
}

}  // namespace dissect::bootstrap
