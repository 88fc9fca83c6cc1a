// A fabric for the mini-gda CPU experiments: two PEs, each with `qps` connected requester QPs
// towards the other, one registered buffer, and the peer's buffer address and rkey.
//
// Two implementations, one interface, so that `dissect latency` and `dissect rate` run the same
// code on either:
//  - softnic (softnic_fabric.cpp): both PEs in this process over one SoftNic (LoopbackFabric);
//    this process drives both PEs.
//  - ranks (rank_fabric.h): one PE per process, two processes found through the bootstrap, each on
//    its own NIC (mlx5: a ConnectX through rdma-core). A process drives only its own PE; rank 0
//    measures, rank 1 is the target (and the responder of a round trip).
//
// Who calls: the experiment's main thread creates a fabric per run through a FabricSession; the
// QP handles go by value to submitter threads. barrier() and read_word() are collectives: on two
// ranks both processes call them in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/results.h"
#include "dissect/nic/nic.h"

namespace dissect::bench {

class Arguments;

// What every run of one experiment asks of its fabric.
struct FabricConfig {
  uint32_t qps = 1;          // requester QPs per PE (QP i of PE 0 is connected to QP i of PE 1)
  size_t buffer_words = 512; // registered buffer per PE, 8-byte words
  uint32_t sq_wqebbs = 1024; // send queue depth of every QP
};

// A peer's registered buffer as a one-sided write needs it.
struct RemoteBuffer {
  uint64_t address = 0;
  uint32_t rkey = 0;
  size_t words = 0;
};

// One PE's view: what a submitter on that PE needs to write into the other PE.
struct FabricSide {
  std::vector<nic::QpHandle> qps;  // requester QPs, connected to the peer's QPs
  uint64_t* buffer = nullptr;      // this PE's registered buffer
  size_t words = 0;
  uint32_t lkey = 0;               // of `buffer`, for pointer (non-inline) writes
  RemoteBuffer peer;               // the other PE's buffer
};

class Fabric {
 public:
  virtual ~Fabric() = default;
  // True when this process drives PE `pe` (0 or 1): both in process, one per rank.
  virtual bool drives(int pe) const = 0;
  // PE `pe`'s view; throws Error naming the rank that drives it when this process does not.
  virtual FabricSide& side(int pe) = 0;
  // Both PEs have reached this point (nothing to wait for in one process).
  virtual void barrier() = 0;
  // Word `index` of PE `pe`'s buffer as its owner reads it now: how the measuring PE validates a
  // payload that landed on another rank. A collective on two ranks.
  virtual uint64_t read_word(int pe, size_t index) = 0;
  // Fills provider, nic_model, engine and pe_layout, and adds the device knobs.
  virtual void label(Result& result) const = 0;
};

// Creates one fabric per run. On two ranks it also owns the bootstrap that outlives them.
class FabricSession {
 public:
  virtual ~FabricSession() = default;
  virtual std::unique_ptr<Fabric> connect(const FabricConfig& config) = 0;
  // False on the rank that only serves as the target: it reports nothing.
  virtual bool measures() const = 0;
  // One line this process prints instead of results when it does not measure.
  virtual std::string served_line(const std::string& experiment) const = 0;
};

// The session for `provider` ("softnic" or "mlx5"). Reads the provider's flags (mlx5: --device,
// --gid-index) from `arguments`; call arguments.check_all_used() after it and open() before the
// first connect(), so that a bad flag is reported before anything waits for a peer.
class FabricSessionBuilder {
 public:
  FabricSessionBuilder(const std::string& provider, const Arguments& arguments);
  std::unique_ptr<FabricSession> open() const;

 private:
  std::string provider_;
  std::string experiment_;  // the subcommand, for launch hints
  std::string device_;   // mlx5: --device; empty = chosen per rank (DISSECT_NIC, PCIe)
  uint8_t gid_index_ = 0;
};

}  // namespace dissect::bench
