// A softnic extension of the requester CQE: when the engine dated and saw the doorbell that
// announced the WQE, relative to the CQE's timestamp, and which engine path executed it. A
// diagnostic for attributing doorbell -> CQE (docs/softnic-engine.md, "Where the time to the
// stamp goes"): `nic-ceiling`'s latency case reads it. Bytes 4..12 of the CQE are reserved in the
// PRM's CQE and error CQE layouts (mlx5_cqe64::reserved4, mlx5_err_cqe::reserved0); a ConnectX
// writes zeros there, and mini-gda never reads them, so nothing but a softnic diagnostic may.
//
//   bytes 4..7   be32  ns from the doorbell's ring date (QpContext::doorbell_rung_ns) to the stamp
//   bytes 8..11  be32  ns from the pass that saw the doorbell (QpContext::doorbell_seen_ns) to it
//   byte 12      CqePath: the engine path that wrote the CQE
//
// A field the engine did not keep (no clock: the fast profile on the host engine, or a doorbell
// read outside a pass) reads CQE_TIME_UNKNOWN; both saturate there.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"
#include "dissect/mlx5/cqe.h"

namespace dissect::softnic {

enum CqePath : uint8_t {
  CQE_PATH_NONE = 0,          // a path that names none (a DC batch)
  CQE_PATH_ONE_AT_A_TIME = 1, // execute_and_retire: flushes, WQEs that run alone
  CQE_PATH_LONE = 2,          // a lone window (engine/lone.h; a DCI's: engine/dc_batch.h)
  CQE_PATH_EXPRESS = 3,       // the express window (engine/express.h)
  CQE_PATH_STAGED = 4,        // the staged window (engine/window.h)
};

inline constexpr uint32_t CQE_TIMES_OFFSET = 4;
inline constexpr uint32_t CQE_TIMES_BYTES = 9;  // bytes 4..12
inline constexpr uint32_t CQE_TIME_UNKNOWN = 0xffffffffu;

struct CqeTimes {
  uint32_t rung_to_stamp_ns;  // CQE_TIME_UNKNOWN: not kept
  uint32_t seen_to_stamp_ns;
  uint8_t path;               // CqePath
};

// `t` ns before `stamp`, as the field holds it: 0 when t is after the stamp, CQE_TIME_UNKNOWN
// when t is 0 (not kept) or further back than the field reaches.
DISSECT_HD inline uint32_t cqe_time_before(uint64_t stamp, uint64_t t) {
  if (t == 0) return CQE_TIME_UNKNOWN;
  if (t >= stamp) return 0;
  const uint64_t d = stamp - t;
  return d < CQE_TIME_UNKNOWN ? static_cast<uint32_t>(d) : CQE_TIME_UNKNOWN;
}

DISSECT_HD inline void set_cqe_times(mlx5::mlx5_cqe64* cqe, uint64_t stamp, uint64_t rung, uint64_t seen,
                                     uint8_t path) {
  const mlx5::be32 a = mlx5::be32::from_host(cqe_time_before(stamp, rung));
  const mlx5::be32 b = mlx5::be32::from_host(cqe_time_before(stamp, seen));
  __builtin_memcpy(&cqe->reserved4[0], &a, 4);
  __builtin_memcpy(&cqe->reserved4[4], &b, 4);
  cqe->reserved4[8] = path;
}

// Stamps a CQE whose body is already in its slot (a held WQE's, engine/lone.h): the timestamp and
// the two dates the extension gives relative to it, written over what the body held; the path
// byte stays. Three stores before the CQE's release, where building the CQE took ~940 cycles.
DISSECT_HD inline void stamp_cqe(mlx5::mlx5_cqe64* entry, uint64_t stamp, uint64_t rung, uint64_t seen) {
  entry->timestamp = mlx5::be64::from_host(stamp);
  const uint32_t a = mlx5::be32::from_host(cqe_time_before(stamp, rung)).raw;
  const uint32_t b = mlx5::be32::from_host(cqe_time_before(stamp, seen)).raw;
  uint32_t* times = reinterpret_cast<uint32_t*>(&entry->reserved4[0]);  // bytes 4..11: 4 B aligned
  times[0] = a;
  times[1] = b;
}

DISSECT_HD inline CqeTimes cqe_times(const mlx5::mlx5_cqe64& cqe) {
  mlx5::be32 a, b;
  __builtin_memcpy(&a, &cqe.reserved4[0], 4);
  __builtin_memcpy(&b, &cqe.reserved4[4], 4);
  return CqeTimes{a.value(), b.value(), cqe.reserved4[8]};
}

}  // namespace dissect::softnic
