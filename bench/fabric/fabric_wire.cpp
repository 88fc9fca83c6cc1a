#include "dissect/bench/fabric_wire.h"

#include <cstring>

#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

template <size_t N>
void copy_name(char (&out)[N], const std::string& text) {
  const size_t n = text.size() < N - 1 ? text.size() : N - 1;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

template <size_t N>
std::string read_name(const char (&in)[N], const std::string& what, int rank) {
  if (std::memchr(in, '\0', N) == nullptr) {
    throw Error("fabric endpoints from rank " + std::to_string(rank) + ": " + what +
                " is not NUL-terminated");
  }
  return std::string(in);
}

void check_header(const FabricWire& w, int rank) {
  const std::string from = "fabric endpoints from rank " + std::to_string(rank);
  if (w.magic != FABRIC_WIRE_MAGIC) {
    throw Error(from + " have magic " + hex(w.magic) + ", expected " + hex(FABRIC_WIRE_MAGIC) +
                " (not a dissect fabric, or another byte order)");
  }
  if (w.version != FABRIC_WIRE_VERSION || w.size != sizeof(FabricWire)) {
    throw Error(from + " are version " + std::to_string(w.version) + " size " +
                std::to_string(w.size) + ", this rank speaks version " +
                std::to_string(FABRIC_WIRE_VERSION) + " size " + std::to_string(sizeof(FabricWire)) +
                ": run the same dissect build on both ranks");
  }
  if (w.rank != rank) throw Error(from + " say rank " + std::to_string(w.rank));
  if (w.qp_count > FABRIC_MAX_QPS) {
    throw Error(from + " offer " + std::to_string(w.qp_count) + " QPs, more than " +
                std::to_string(FABRIC_MAX_QPS));
  }
}

}  // namespace

FabricWire encode(const FabricEndpoints& e) {
  if (e.qps.size() > FABRIC_MAX_QPS) {
    throw InvalidArgument("fabric: " + std::to_string(e.qps.size()) + " QPs per rank, at most " +
                          std::to_string(FABRIC_MAX_QPS));
  }
  FabricWire w;
  std::memset(&w, 0, sizeof(w));  // no stray bytes on the wire
  w.magic = FABRIC_WIRE_MAGIC;
  w.version = FABRIC_WIRE_VERSION;
  w.size = sizeof(FabricWire);
  w.rank = e.rank;
  w.qp_count = static_cast<uint32_t>(e.qps.size());
  w.address = e.buffer.address;
  w.words = e.buffer.words;
  w.rkey = e.buffer.rkey;
  copy_name(w.host, e.host);
  copy_name(w.device, e.device);
  for (size_t i = 0; i < e.qps.size(); ++i) w.qps[i] = bootstrap::to_wire(e.qps[i]);
  return w;
}

FabricEndpoints decode(const FabricWire& w, int rank) {
  check_header(w, rank);
  FabricEndpoints e;
  e.rank = w.rank;
  e.host = read_name(w.host, "host", rank);
  e.device = read_name(w.device, "device", rank);
  for (uint32_t i = 0; i < w.qp_count; ++i) e.qps.push_back(bootstrap::from_wire(w.qps[i]));
  e.buffer = RemoteBuffer{w.address, w.rkey, static_cast<size_t>(w.words)};
  return e;
}

}  // namespace dissect::bench
