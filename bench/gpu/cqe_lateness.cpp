#include "cqe_lateness.h"

#include <cstdio>

#include "dissect/softnic/cqe_times.h"

namespace dissect::bench::gpu {

std::vector<double> cqe_lateness_ns(const std::vector<mlx5::mlx5_cqe64>& cqes, const softnic::TimingProfile& p,
                                    bool pointer, uint32_t connects) {
  const double modelled = static_cast<double>(softnic::modelled_cqe_release_ns(p, pointer, connects));
  std::vector<double> ns;
  for (const mlx5::mlx5_cqe64& cqe : cqes) {
    const softnic::CqeTimes t = softnic::cqe_times(cqe);
    // A slot never written (no stamp), or a CQE whose writer kept no ring date (cqe_times.h).
    if (cqe.timestamp.value() == 0 || t.rung_to_stamp_ns == softnic::CQE_TIME_UNKNOWN) continue;
    ns.push_back(static_cast<double>(t.rung_to_stamp_ns) - modelled);
  }
  return ns;
}

std::string late_cqe_note(double late_ns) {
  if (late_ns <= LATE_CQE_NOTE_NS) return "";
  char text[200];
  std::snprintf(text, sizeof text,
                "the engine stamped its CQEs a median %.2f us after the profile's dates: this latency is "
                "the softnic engine's, not the NIC model's; ",
                late_ns / 1e3);
  return text;
}

}  // namespace dissect::bench::gpu
