// The first-fit allocator over a SoftNic's exported arena (softnic/ipc.h). Host-side
// bookkeeping only: the arena's memory is one cudaMalloc, so giving a block back never calls
// cudaFree (which would wait for the running engine forever) and the IPC handle stays valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "dissect/common/error.h"

namespace dissect::softnic {

class IpcArena {
 public:
  static constexpr size_t ALIGNMENT = 4096;  // as allocate() rounds cudaMalloc'ed blocks

  IpcArena(uint8_t* base, size_t bytes, std::string owner)
      : base_(base), bytes_(bytes), owner_(std::move(owner)) {
    if (bytes_ != 0) free_[0] = bytes_;
  }

  uint8_t* base() const { return base_; }
  size_t bytes() const { return bytes_; }
  bool owns(const void* p) const {
    const auto* b = static_cast<const uint8_t*>(p);
    return b >= base_ && b < base_ + bytes_;
  }

  // A block of at least `bytes`, ALIGNMENT-aligned (the arena base is cudaMalloc-aligned).
  uint8_t* take(size_t bytes, const char* what) {
    const size_t rounded = (bytes + ALIGNMENT - 1) & ~(ALIGNMENT - 1);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < rounded) continue;
      const size_t offset = it->first, left = it->second - rounded;
      free_.erase(it);
      if (left != 0) free_[offset + rounded] = left;
      used_[offset] = rounded;
      return base_ + offset;
    }
    throw Error(owner_ + ": IPC arena of " +
                std::to_string(bytes_) + " B has no free block of " + std::to_string(rounded) +
                " B for " + what + " (" + std::to_string(free_bytes()) +
                " B free in all): raise SoftNicOptions::ipc_arena_bytes");
  }

  void give_back(void* p) {
    const size_t offset = static_cast<size_t>(static_cast<uint8_t*>(p) - base_);
    auto it = used_.find(offset);
    if (it == used_.end()) {
      throw InvalidArgument(owner_ + ": offset " +
                            std::to_string(offset) + " is not a block of its IPC arena");
    }
    size_t start = offset, length = it->second;
    used_.erase(it);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && next->first == start + length) {  // merge with the block after
      length += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {  // merge with the block before
      auto previous = std::prev(next);
      if (previous->first + previous->second == start) {
        start = previous->first;
        length += previous->second;
        free_.erase(previous);
      }
    }
    free_[start] = length;
  }

  size_t free_bytes() const {
    size_t total = 0;
    for (const auto& [offset, length] : free_) total += length;
    return total;
  }

 private:
  uint8_t* base_;
  size_t bytes_;
  std::string owner_;  // "softnic on device 1", for messages
  std::map<size_t, size_t> free_;  // offset -> bytes, disjoint and never adjacent
  std::map<size_t, size_t> used_;  // offset -> bytes handed out
};

}  // namespace dissect::softnic
