// PRM command fields as bit ranges of a big-endian dword array (the mlx5_ifc convention).
//
// The PRM numbers the bits of a command from the most significant bit of byte 0: a field at bit
// offset `o` with width `w` occupies bits o..o+w-1, most significant first. rdma-core's DEVX_SET
// stores such a field into dword o/32 of the command, shifted left by 32 - (o % 32) - w, and the
// dword lies in memory big-endian (mlx5dv.h DEVX_SET / DEVX_SET64). Two rules DEVX_SET enforces
// and `is_valid_field` checks at compile time: a field of at most 32 bits never crosses a dword,
// and a 64-bit field starts on a dword.
//
// Offsets are written out as numbers next to the PRM name, each with the mlx5_ifc struct it comes
// from, so a reader can check them against rdma-core's providers/mlx5/mlx5_ifc.h or the kernel's
// include/linux/mlx5/mlx5_ifc.h without running anything.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dissect/mlx5/endian.h"

namespace dissect::mlx5provider {

struct PrmField {
  uint32_t bit_offset;  // from the MSB of byte 0 of the enclosing structure
  uint32_t width;       // bits: 1..32, or 64
};

constexpr bool is_valid_field(PrmField f) {
  if (f.width == 64) return f.bit_offset % 32 == 0;
  return f.width >= 1 && f.width <= 32 && (f.bit_offset % 32) + f.width <= 32;
}

// A field of a structure that is itself nested at bit `base` of a command (DEVX_SET's
// "capability.cmd_hca_cap.cqe_version" paths).
constexpr PrmField at(uint32_t base, PrmField f) { return PrmField{base + f.bit_offset, f.width}; }

// A command or context of `Bits` bits, as the dwords DEVX commands take (DEVX_ST_SZ_DW).
template <uint32_t Bits>
struct PrmBuffer {
  static_assert(Bits % 32 == 0, "PRM structures are whole dwords");
  static constexpr uint32_t bits = Bits;
  static constexpr uint32_t bytes = Bits / 8;
  std::array<uint32_t, Bits / 32> dwords{};

  void* data() { return dwords.data(); }
  const void* data() const { return dwords.data(); }
  uint8_t byte(size_t index) const {
    uint8_t out;
    std::memcpy(&out, reinterpret_cast<const uint8_t*>(dwords.data()) + index, 1);
    return out;
  }
};

namespace detail {
inline uint32_t load_be32(const uint32_t* dwords, uint32_t index) {
  return mlx5::byte_swap(dwords[index]);
}
inline void store_be32(uint32_t* dwords, uint32_t index, uint32_t host) {
  dwords[index] = mlx5::byte_swap(host);
}
constexpr uint32_t low_mask(uint32_t width) {
  return width == 32 ? 0xffffffffu : ((1u << width) - 1u);
}
}  // namespace detail

// DEVX_SET / DEVX_SET64: bits of `value` above the field width are dropped, as DEVX_SET drops them.
inline void set_field(uint32_t* dwords, PrmField f, uint64_t value) {
  if (f.width == 64) {
    detail::store_be32(dwords, f.bit_offset / 32, static_cast<uint32_t>(value >> 32));
    detail::store_be32(dwords, f.bit_offset / 32 + 1, static_cast<uint32_t>(value));
    return;
  }
  const uint32_t index = f.bit_offset / 32;
  const uint32_t shift = 32 - (f.bit_offset % 32) - f.width;
  const uint32_t mask = detail::low_mask(f.width) << shift;
  const uint32_t old = detail::load_be32(dwords, index);
  const uint32_t field = (static_cast<uint32_t>(value) << shift) & mask;
  detail::store_be32(dwords, index, (old & ~mask) | field);
}

inline uint64_t get_field(const uint32_t* dwords, PrmField f) {
  if (f.width == 64) {
    return (static_cast<uint64_t>(detail::load_be32(dwords, f.bit_offset / 32)) << 32) |
           detail::load_be32(dwords, f.bit_offset / 32 + 1);
  }
  const uint32_t shift = 32 - (f.bit_offset % 32) - f.width;
  return (detail::load_be32(dwords, f.bit_offset / 32) >> shift) & detail::low_mask(f.width);
}

// Byte arrays in a command (rgid_rip, rmac): copied raw, starting on a byte boundary.
inline void set_bytes(uint32_t* dwords, uint32_t bit_offset, const uint8_t* source, size_t count) {
  std::memcpy(reinterpret_cast<uint8_t*>(dwords) + bit_offset / 8, source, count);
}

template <uint32_t Bits>
void set_field(PrmBuffer<Bits>& buffer, PrmField f, uint64_t value) {
  set_field(buffer.dwords.data(), f, value);
}
template <uint32_t Bits>
uint64_t get_field(const PrmBuffer<Bits>& buffer, PrmField f) {
  return get_field(buffer.dwords.data(), f);
}

}  // namespace dissect::mlx5provider
