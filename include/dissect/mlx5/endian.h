// Big-endian field types for mlx5 structures.
//
// Every multi-byte field the NIC reads or writes is big-endian (PRM; rdma-core's __be16/__be32/
// __be64). These types keep the wire byte order in the type system: there is no implicit conversion
// to or from a host integer, so a missing byte swap is a compile error, not a wrong doorbell.
// Compiles for host and device; no CUDA needed.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dissect assumes a little-endian host and device (x86-64, aarch64, NVIDIA GPUs)"
#endif

namespace dissect::mlx5 {

// On the device a swap is one PRMT (byte permute) instead of the seven shift-and-mask instructions
// the portable form compiles to: a GPU thread building a WQE swaps about ten fields, all on the
// issue path. Constant evaluation (the static_asserts below) takes the portable form.
DISSECT_HD constexpr uint16_t byte_swap(uint16_t v) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return static_cast<uint16_t>(__byte_perm(v, 0, 0x4401));
#endif
  return static_cast<uint16_t>((v << 8) | (v >> 8));
}
DISSECT_HD constexpr uint32_t byte_swap(uint32_t v) {
#if defined(__CUDA_ARCH__)
  if (!__builtin_is_constant_evaluated()) return __byte_perm(v, 0, 0x0123);
#endif
  return ((v & 0x000000ffu) << 24) | ((v & 0x0000ff00u) << 8) | ((v & 0x00ff0000u) >> 8) |
         ((v & 0xff000000u) >> 24);
}
DISSECT_HD constexpr uint64_t byte_swap(uint64_t v) {
  return (static_cast<uint64_t>(byte_swap(static_cast<uint32_t>(v))) << 32) |
         byte_swap(static_cast<uint32_t>(v >> 32));
}

// A big-endian value of type T as it lies in memory. `raw` is the memory image; `value()` the host
// number it encodes.
template <typename T>
struct big_endian {
  T raw;

  DISSECT_HD static constexpr big_endian from_host(T host) { return big_endian{byte_swap(host)}; }
  DISSECT_HD static constexpr big_endian from_raw(T memory_image) { return big_endian{memory_image}; }
  DISSECT_HD constexpr T value() const { return byte_swap(raw); }
  DISSECT_HD constexpr bool operator==(big_endian other) const { return raw == other.raw; }
  DISSECT_HD constexpr bool operator!=(big_endian other) const { return raw != other.raw; }
};

using be16 = big_endian<uint16_t>;
using be32 = big_endian<uint32_t>;
using be64 = big_endian<uint64_t>;

static_assert(sizeof(be16) == 2 && sizeof(be32) == 4 && sizeof(be64) == 8);
static_assert(be32::from_host(0x01020304u).raw == 0x04030201u);
static_assert(be16::from_host(0x0102).raw == 0x0201);
static_assert(be64::from_host(0x0102030405060708ull).raw == 0x0807060504030201ull);

}  // namespace dissect::mlx5
