// How late the softnic engine stamped a latency run's CQEs against the dates its NIC's timing
// profile gives them (softnic/profile.h modelled_cqe_release_ns), from the softnic's CQE extension
// (dissect/softnic/cqe_times.h: the ns from the doorbell's ring date to the stamp). Above zero the
// CQE left when the engine got there, and a latency timed through it is the engine's lone path,
// not the profile's (docs/results/h100/stop42/). Host-only: harness.cu reads the CQ back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/mlx5/cqe.h"
#include "dissect/softnic/profile.h"

namespace dissect::bench::gpu {

// For each written CQE of `cqes` (a stamp, and a ring date its writer kept): its ring-to-stamp
// less the modelled release of a put of this payload (`pointer`) with `connects` DC connects, on an
// idle pipe: the payload's wire time is not in the date, a few ns for the latency rows' 8-220 B.
std::vector<double> cqe_lateness_ns(const std::vector<mlx5::mlx5_cqe64>& cqes, const softnic::TimingProfile& p,
                                    bool pointer, uint32_t connects);

// The note a latency row carries when its CQEs left a median `late_ns` after their dates: empty
// within LATE_CQE_NOTE_NS (the profile's latency, not the engine's).
inline constexpr double LATE_CQE_NOTE_NS = 100;
std::string late_cqe_note(double late_ns);

}  // namespace dissect::bench::gpu
