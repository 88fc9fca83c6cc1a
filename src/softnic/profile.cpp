#include "dissect/softnic/profile.h"

#include <cstdio>
#include <cstring>
#include <fstream>

#include "dissect/common/error.h"

namespace dissect::softnic {
namespace {

TimingProfile named(const char* name) {
  TimingProfile p{};
  std::snprintf(p.name, sizeof p.name, "%s", name);
  return p;
}

// The paper's P-IB (Table 3, §4.1): an instrumented run sees a valid CQE 3.30 us after the
// doorbell store; the round trip of an inline 8 B put is 6.85 us against 0.70 us of issue, so
// data lands (6.85 - 2 x 0.70) / 2 = 2.725 us after the doorbell and the CQE 0.575 us later; a
// pointer put completes 0.61 us later than an inline one (4.64 vs 4.03); the NIC's ceiling is
// 260 M msg/s (Table 5) and the link's reference goodput 24.8 GB/s (Figure 8), in 4 KiB packets that
// each add 42 B on the wire (an RDMA WRITE Only packet's LRH 8, BTH 12, RETH 16, ICRC 4, VCRC 2),
// so 512 B writes carry 93 % of it and 256 B writes 86 % (the paper's first size at 90 %: 512 B).
//
// The connection-state model (profile.h) is fitted to Figure 10 (P-H100, the same ConnectX-7
// class; docs/softnic-engine.md, "Timing profiles", has the arithmetic and the predictions):
//  - receive_message_rate_mps 440: simultaneous traffic starts at 152 where send-only holds 242, so
//    one sent plus one received message costs 242 / 152 of a sent one: 3.85 ns x 0.59 = 2.27 ns.
//  - send_context_miss_ns 9: send-only at 32,768 QPs, every 32-write window a miss, holds 242 of
//    the 260 ceiling: 32 x 3.85 ns x (260 / 242 - 1) = 9.2 ns a miss.
//  - receive_context_miss_ns 198: simultaneous traffic falls from 152 to 74 at 32,768 QPs per
//    direction (65,536 contexts per NIC, all missing): a window pair of 32 + 32 messages, 195.8 ns,
//    grows by 195.8 x (152 / 74 - 1) = 206 ns = 9 + 198.
//  - qp_cache_entries 12,288: the dense sweep's fitted onset, 1,350 active connections per NIC,
//    taken as where simultaneous traffic has lost 10 % (misses on 11 % of windows: 1,350 contexts
//    fill a direct-mapped cache of 1,350 / 0.111 = 12,160 to that point). The cache must hash as
//    random keys do for this to hold (cache_slot mixes the QPN: stop 41 measured 0.015 misses a
//    message at 4,096 QPs both ways, the fit's, where a Fibonacci hash had given 0.001).
//
// scheduling_quantum_wqes 32: the fits above take a miss per 32-write visit at 32,768 QPs, and the
// paper's rig moved to another connection after 32 writes. A NIC model that served a queue's whole
// backlog at once would pay one miss per backlog instead: the softnic's GPU engine, which served up
// to 64 WQEs a visit, counted about one miss per two windows at 32,768 QPs (0.016 a message against
// 1 / 32), as two windows a visit allow when the engine runs behind, and simultaneous traffic
// measured 111 M msg/s where the fit predicts 80 (H200, stop 39). With the quantum a queue pays its
// lookup per 32 WQEs whether or not the engine keeps up: misses 0.016 -> 0.031 a message, 110.5 ->
// 85.4 M msg/s (H100, stop 40, docs/results/h100/stop40/). Not a documented ConnectX figure: the
// scheduler's arbitration unit this model needs for the fit to mean what it says.
//
// cqe_transit_ns 770: the paper's 3.30 us ends at the CQE seen by a GPU poller, so a CQE the
// engine released at the ring date + 3.30 us would be seen its own CQE hop later (`stamp to CQE
// seen`, nic-ceiling --nic-profile fast: 0.77 us on the H200, 0.83 on the H100; the smaller taken,
// so no CQE is seen before its modelled date). It exceeds data_to_cqe_ns, so the CQE is released
// with the payload's date and seen ~0.2 us after the modelled 3.30 us (cqe_release_ns never goes
// below the payload's date). Set so that the model stops counting the hop twice; while the engine
// reaches the CQE's date late, the CQE leaves when the engine gets there and this field changes
// nothing measured: on the H100 (2026-12-06) a lone RC WQE's CQE is still published ~0.6 us after
// its date (the held WQE's release, docs/softnic-engine.md), so cx7-ib's latencies carry that.
//
// dc_connect_ns 450 is FITTED, not predicted: the paper's §4.3.3 states DC at "0.45 us above RC
// through completion in mini-gda" (one destination, one put outstanding). Under the model's rule
// (engine/dc_timing.h) every such put finds its DCI idle, so it pays one connect, and the whole
// difference is put on it; the model's other DC costs (the AV's bytes) are left at zero here.
TimingProfile cx7_ib() {
  TimingProfile p = named("cx7-ib");
  p.enabled = 1;
  p.doorbell_to_data_ns = 2725;
  p.payload_read_ns = 610;
  p.data_to_cqe_ns = 575;
  p.message_rate_mps = 260;
  p.goodput_gbps = 24.8;
  p.packet_header_bytes = 42;
  p.mtu_bytes = 4096;
  p.qp_cache_entries = 12288;
  p.send_context_miss_ns = 9;
  p.receive_context_miss_ns = 198;
  p.receive_message_rate_mps = 440;
  p.dc_connect_ns = 450;
  p.cqe_transit_ns = 770;
  p.scheduling_quantum_wqes = 32;
  return p;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  const size_t b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

double number(const std::string& file, int line, const std::string& key, const std::string& text,
              double max) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= 0) || v > max) {
    throw InvalidArgument("NIC profile " + file + " line " + std::to_string(line) + ": " + key +
                          " = '" + text + "' (a number in [0, " + std::to_string(max) + "])");
  }
  return v;
}

// A count: a whole number (a cache of 2.5 entries is a typo, not a model).
double whole(const std::string& file, int line, const std::string& key, const std::string& text,
             double max) {
  const double v = number(file, line, key, text, max);
  if (v != static_cast<double>(static_cast<uint64_t>(v))) {
    throw InvalidArgument("NIC profile " + file + " line " + std::to_string(line) + ": " + key +
                          " = '" + text + "' (a whole number in [0, " + std::to_string(static_cast<uint64_t>(max)) + "])");
  }
  return v;
}

// A profile file's numeric keys: the field each sets and its range.
struct ProfileField {
  const char* key;
  uint32_t TimingProfile::*u32;  // the field it sets: a whole-nanosecond or byte field,
  double TimingProfile::*real;   // or a rate (the other one is null)
  double max;
  bool whole;  // a count: a whole number
};
constexpr ProfileField PROFILE_FIELDS[] = {
    {"doorbell_to_data_ns", &TimingProfile::doorbell_to_data_ns, nullptr, 1e9, false},
    {"payload_read_ns", &TimingProfile::payload_read_ns, nullptr, 1e9, false},
    {"data_to_cqe_ns", &TimingProfile::data_to_cqe_ns, nullptr, 1e9, false},
    {"message_rate_mps", nullptr, &TimingProfile::message_rate_mps, 1e6, false},
    {"goodput_gbps", nullptr, &TimingProfile::goodput_gbps, 1e6, false},
    {"packet_header_bytes", &TimingProfile::packet_header_bytes, nullptr, 1e6, false},
    {"mtu_bytes", &TimingProfile::mtu_bytes, nullptr, double(1ull << 31), false},
    {"qp_cache_entries", &TimingProfile::qp_cache_entries, nullptr, MAX_QP_CACHE_ENTRIES, true},
    {"send_context_miss_ns", &TimingProfile::send_context_miss_ns, nullptr, 1e9, false},
    {"receive_context_miss_ns", &TimingProfile::receive_context_miss_ns, nullptr, 1e9, false},
    {"receive_message_rate_mps", nullptr, &TimingProfile::receive_message_rate_mps, 1e6, false},
    {"dc_connect_ns", &TimingProfile::dc_connect_ns, nullptr, 1e9, false},
    {"cqe_transit_ns", &TimingProfile::cqe_transit_ns, nullptr, 1e9, false},
    {"scheduling_quantum_wqes", &TimingProfile::scheduling_quantum_wqes, nullptr, 1 << 16, true},
};

const ProfileField* find_field(const std::string& key) {
  for (const ProfileField& f : PROFILE_FIELDS) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

TimingProfile from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw InvalidArgument("NIC profile '" + path + "': neither fast, cx7-ib nor a readable file");
  }
  TimingProfile p = named("custom");
  p.enabled = 1;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    text = trim(text.substr(0, text.find('#')));
    if (text.empty()) continue;
    const size_t eq = text.find('=');
    if (eq == std::string::npos) {
      throw InvalidArgument("NIC profile " + path + " line " + std::to_string(line) + ": '" + text +
                            "' is not key = value");
    }
    const std::string key = trim(text.substr(0, eq)), value = trim(text.substr(eq + 1));
    if (key == "name") {
      std::snprintf(p.name, sizeof p.name, "%s", value.c_str());
      continue;
    }
    const ProfileField* field = find_field(key);
    if (field == nullptr) {
      throw InvalidArgument("NIC profile " + path + " line " + std::to_string(line) +
                            ": unknown key '" + key + "'");
    }
    const double v = field->whole ? whole(path, line, key, value, field->max)
                                  : number(path, line, key, value, field->max);
    if (field->u32 != nullptr) {
      p.*(field->u32) = static_cast<uint32_t>(v);
    } else {
      p.*(field->real) = v;
    }
  }
  return p;
}

}  // namespace

TimingProfile timing_profile(const std::string& name_or_path) {
  if (name_or_path == "fast") return named("fast");
  if (name_or_path == "cx7-ib") return cx7_ib();
  return from_file(name_or_path);
}

const char* profile_name(const TimingProfile& profile) { return profile.name; }

}  // namespace dissect::softnic
