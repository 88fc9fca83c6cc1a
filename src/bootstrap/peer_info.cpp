#include "dissect/bootstrap/peer_info.h"
#include "dissect/bootstrap/wire_name.h"

#include <unistd.h>

#include <algorithm>
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

std::string entry_name(int index) { return "PeerInfo from rank " + std::to_string(index); }

}  // namespace

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

PeerInfo make_peer_info(const Bootstrap& bootstrap, const std::vector<nic::QpEndpoint>& endpoints,
                        const nic::MemoryRegion& region, const std::string& nic, int gpu) {
  if (endpoints.size() > PEER_INFO_MAX_ENDPOINTS) {
    throw InvalidArgument("make_peer_info: " + std::to_string(endpoints.size()) +
                          " QP endpoints, a PeerInfo carries at most " +
                          std::to_string(PEER_INFO_MAX_ENDPOINTS));
  }
  PeerInfo info;
  info.rank = bootstrap.rank();
  info.local_rank = bootstrap.local_rank();
  info.endpoint_count = static_cast<uint32_t>(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) info.endpoints[i] = to_wire(endpoints[i]);
  info.rkey = region.rkey;
  info.address = reinterpret_cast<uint64_t>(region.address);
  info.length = region.length;
  copy_wire_name(info.host, host_name());
  copy_wire_name(info.nic, nic);
  info.gpu = gpu;
  return info;
}

void check_peer_info(const PeerInfo& p, int rank) {
  if (p.magic != PEER_INFO_MAGIC) {
    throw Error(entry_name(rank) + " has magic " + hex(p.magic) + ", expected " +
                hex(PEER_INFO_MAGIC) + " (not a dissect PE, or another byte order)");
  }
  if (p.version != PEER_INFO_VERSION || p.size != sizeof(PeerInfo)) {
    throw Error(entry_name(rank) + " is version " + std::to_string(p.version) + " size " +
                std::to_string(p.size) + ", this PE speaks version " +
                std::to_string(PEER_INFO_VERSION) + " size " + std::to_string(sizeof(PeerInfo)) +
                ": build every PE from the same dissect");
  }
  if (p.rank != rank) {
    throw Error(entry_name(rank) + " says rank " + std::to_string(p.rank) +
                ": make it with make_peer_info() on that PE");
  }
  if (p.endpoint_count > PEER_INFO_MAX_ENDPOINTS) {
    throw Error(entry_name(rank) + " offers " + std::to_string(p.endpoint_count) +
                " QP endpoints, more than the " + std::to_string(PEER_INFO_MAX_ENDPOINTS) +
                " it has room for");
  }
  check_wire_name(p.host, "host", entry_name(rank));
  check_wire_name(p.nic, "nic", entry_name(rank));
}

std::vector<nic::QpEndpoint> offered_endpoints(const PeerInfo& info) {
  // Clamped, so that an info check_peer_info has not seen cannot read past the array.
  const uint32_t count = std::min(info.endpoint_count, PEER_INFO_MAX_ENDPOINTS);
  std::vector<nic::QpEndpoint> endpoints;
  for (uint32_t i = 0; i < count; ++i) endpoints.push_back(from_wire(info.endpoints[i]));
  return endpoints;
}

std::vector<PeerInfo> exchange_peer_info(Bootstrap& bootstrap, const PeerInfo& mine) {
  std::vector<PeerInfo> all = allgather_value(bootstrap, mine);
  for (size_t i = 0; i < all.size(); ++i) check_peer_info(all[i], static_cast<int>(i));
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
