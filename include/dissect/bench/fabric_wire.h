// What each rank of a two-rank fabric tells the other before the first write: its requester QPs,
// its registered buffer and the names of its host and NIC. One fixed-size, versioned record per
// rank, exchanged with one allgather; a peer built from another commit, or launched with other
// flags (another QP count), is refused with an error naming the rank and the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dissect/bench/fabric.h"
#include "dissect/bootstrap/peer_info.h"

namespace dissect::bench {

inline constexpr uint32_t FABRIC_WIRE_MAGIC = 0x42414644;  // "DFAB" little-endian
inline constexpr uint16_t FABRIC_WIRE_VERSION = 1;
inline constexpr uint32_t FABRIC_MAX_QPS = 64;  // the rate experiment's --threads limit

// In memory: one rank's offer.
struct FabricEndpoints {
  int rank = -1;
  std::string host;
  std::string device;                 // "mlx5_0"
  std::vector<nic::QpEndpoint> qps;   // QP i is to be connected to the peer's QP i
  RemoteBuffer buffer;
};

// On the wire: a fixed-size image of FabricEndpoints.
struct FabricWire {
  uint32_t magic;
  uint16_t version;
  uint16_t size;        // sizeof(FabricWire) of the sender
  int32_t rank;
  uint32_t qp_count;
  uint64_t address;     // buffer
  uint64_t words;
  uint32_t rkey;
  uint32_t reserved;
  char host[64];
  char device[32];
  bootstrap::WireEndpoint qps[FABRIC_MAX_QPS];
};
static_assert(sizeof(FabricWire) == 136 + 28 * FABRIC_MAX_QPS);
static_assert(std::is_trivially_copyable_v<FabricWire>);

// Throws InvalidArgument when there are more than FABRIC_MAX_QPS QPs.
FabricWire encode(const FabricEndpoints& endpoints);
// Throws Error naming `rank` (the index the record arrived at) and the field that is wrong: magic,
// version or size, a rank other than `rank`, a QP count above the limit, an unterminated name.
FabricEndpoints decode(const FabricWire& wire, int rank);

}  // namespace dissect::bench
