// The number formats of the MoE client, in software, identical on host and device: BF16 (round to
// nearest even), FP8 E4M3 (OCP "e4m3fn": bias 7, max 448, no infinities, saturating, round to
// nearest even) and the float operations the reference must reproduce bit for bit.
//
// What is real and what is modelled: the bytes are genuine E4M3 and BF16 encodings and DeepEP's
// per-128-element scaling (amax clamped at 1e-4, scale 448 / amax, stored factor amax / 448), but
// they are produced by this code, not by the hardware's cvt instructions, so host and device give
// the same bytes and the host reference checks every one exactly.
#pragma once

#include <cstdint>
#include <cstring>

#include "dissect/common/device.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace dissect::moe {

inline constexpr float FP8_E4M3_MAX = 448.0f;
inline constexpr float AMAX_FLOOR = 1e-4f;  // DeepEP: fmaxf(amax, 1e-4)

// Single IEEE operations that the device compiler may not contract into an FMA: the host
// reference computes the same expression and must get the same bits.
DISSECT_HD inline float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
DISSECT_HD inline float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
DISSECT_HD inline float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

DISSECT_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
DISSECT_HD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

DISSECT_HD inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // finite inputs only
}
DISSECT_HD inline float bf16_to_float(uint16_t b) { return bits_float(uint32_t{b} << 16); }

// 2^e for an integer e in the E4M3 range, exactly (no libm call).
DISSECT_HD inline float power_of_two(int e) { return bits_float(static_cast<uint32_t>(e + 127) << 23); }

// Round-to-nearest-even of a non-negative float below 2^22 to an integer.
DISSECT_HD inline uint32_t round_even(float v) {
  const uint32_t whole = static_cast<uint32_t>(v);
  const float rest = v - static_cast<float>(whole);
  if (rest > 0.5f || (rest == 0.5f && (whole & 1u))) return whole + 1;
  return whole;
}

DISSECT_HD inline uint8_t float_to_e4m3(float f) {
  const uint8_t sign = (float_bits(f) >> 24) & 0x80u;
  const float a = fabsf(f);
  if (!(a < FP8_E4M3_MAX)) return sign | 0x7eu;  // saturate (448), NaN included
  const int exponent = static_cast<int>((float_bits(a) >> 23) & 0xffu) - 127;
  if (exponent < -6) {  // subnormal: steps of 2^-9; 8 steps round up into the smallest normal
    return sign | static_cast<uint8_t>(round_even(mul_rn(a, 512.0f)));
  }
  // a / 2^exponent in [1, 2): three mantissa bits, rounded; a carry moves to the next exponent.
  const uint32_t q = round_even(mul_rn(mul_rn(a, power_of_two(-exponent)) - 1.0f, 8.0f));
  const uint32_t code = (static_cast<uint32_t>(exponent + 7) << 3) + q;
  return sign | static_cast<uint8_t>(code > 0x7eu ? 0x7eu : code);
}

DISSECT_HD inline float e4m3_to_float(uint8_t b) {
  const uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
  const float magnitude = e == 0 ? static_cast<float>(m) * power_of_two(-9)
                                 : (1.0f + static_cast<float>(m) * 0.125f) * power_of_two(int(e) - 7);
  return (b & 0x80u) ? -magnitude : magnitude;
}

}  // namespace dissect::moe
