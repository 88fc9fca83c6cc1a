// Private: memory registration for the softnic's protection domains. One function checks the
// request and builds the memory-key entry; the NIC then writes it through its table memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dissect/common/error.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"

namespace dissect::softnic {

// A free slot of a NIC's MR table and the tag that makes its next key differ from its last.
struct MrSlot {
  uint32_t index;
  uint32_t tag;  // its low 8 bits go into the key
};

// The slot of the MR table that `key` names (keys are index << 8 | tag: context.h).
inline uint32_t mr_index(uint32_t key) { return key >> 8; }

// Checks a registration request (throws InvalidArgument naming the value), then takes a slot from
// `take_slot` (a callable returning MrSlot; called only once the request is valid, so a refused
// request costs no slot and no tag) and returns the entry for it: key = index << 8 | tag,
// valid = 1.
template <typename TakeSlot>
MrEntry make_mr_entry(void* address, size_t length, uint32_t access, uint32_t pd,
                      TakeSlot&& take_slot) {
  if (address == nullptr || length == 0) {
    throw InvalidArgument("register_memory: empty region (address " +
                          hex(reinterpret_cast<uintptr_t>(address)) + ", length " +
                          std::to_string(length) + ")");
  }
  if ((access & ~nic::ACCESS_ALL) != 0) {
    throw InvalidArgument("register_memory: unknown access flags " + hex(access));
  }
  const MrSlot slot = take_slot();
  MrEntry entry{};
  entry.address = reinterpret_cast<uintptr_t>(address);
  entry.length = length;
  entry.key = (slot.index << 8) | (slot.tag & 0xff);
  entry.access = access;
  entry.pd = pd;
  entry.valid = 1;
  return entry;
}

// What register_memory returns for `entry`: its key is both the lkey and the rkey.
inline nic::MemoryRegion memory_region(const MrEntry& entry) {
  return nic::MemoryRegion{reinterpret_cast<void*>(static_cast<uintptr_t>(entry.address)),
                           static_cast<size_t>(entry.length), entry.key, entry.key, entry.access};
}

}  // namespace dissect::softnic
