// The NIC model's fuzz campaign replayed on the GPU: the CPU campaign's cases (same seed, same case
// indices, same generator and oracle: tests/support/nic_model_fuzz.h), each service step run by
// softnic::service_qp in a kernel over rigs in mapped pinned memory, then checked on the host by
// the CPU driver's checks (nic_model_fuzz_check.h): arena byte for byte, QP fields, flush rule.
//
//   nic_model_fuzz_gpu [--wqes N] [--seed S] [--rigs K] [--quick] [--host-engine]
//     --wqes N        stop after N WQEs consumed by the engine (default 1000000)
//     --quick         --wqes 10000 (ctest; compute-sanitizer runs ~100x slower)
//     --rigs K        cases in flight per kernel, one rig and one thread block each (default 128)
//     --host-engine   the same replay with service_qp on the host (checks the replay, no device)
// Exit 0 clean, 1 on any mismatch, guard change, flush violation or device fault, 77 without a
// CUDA device (with a line saying so).
//
// Lockstep: K cases run side by side, step s of every live case in one launch of K blocks, so each
// step is still checked alone (as the CPU driver checks it) while a launch + sync is paid once per
// K steps. The campaign is whole batches: cases 0 .. a multiple of K - 1, i.e. the CPU campaign's
// cases for the same --wqes and up to K - 1 more. A rig's absolute addresses differ from the CPU
// run's, but every address the generator draws is relative to the rig, so the cases are the same.
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "engine/execute.h"
#include "gpu_cases.h"
#include "support/nic_model_fuzz_check.h"

namespace sn = dissect::softnic;
namespace m = dissect::mlx5;
using dissect::testing::NicModelRig;
namespace fz = dissect::testing::fuzz;

namespace {

// One rig's step, in mapped memory: the host fills it, the kernel runs it.
struct Slot {
  sn::QpContext* qp;
  const sn::NicTables* nic;
  uint32_t budget;
  uint32_t run;       // 0: this rig sits the step out (its case ended, broke or was skipped)
  uint32_t executed;  // service_qp's return
};

// One thread per rig: service_qp is the engine's single-thread path, called as the CPU driver calls it.
__global__ void service_step(Slot* slots, uint32_t count) {
  if (blockIdx.x >= count || threadIdx.x != 0) return;
  Slot& s = slots[blockIdx.x];
  if (s.run != 0) s.executed = sn::service_qp(*s.qp, *s.nic, s.budget);
}

std::vector<void*> mapped_blocks;

// Mapped pinned memory the device reaches at the host's address: the rig's WQEs and MR table hold
// absolute addresses, so a device pointer that differs would make every case a wild access.
void* mapped(uint64_t bytes) {
  void* host = nullptr;
  cudaError_t e = cudaHostAlloc(&host, bytes, cudaHostAllocMapped);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "nic_model_fuzz_gpu: cudaHostAlloc(%" PRIu64 "): %s\n", bytes, cudaGetErrorString(e));
    std::exit(1);
  }
  void* device = nullptr;
  e = cudaHostGetDevicePointer(&device, host, 0);
  if (e != cudaSuccess || device != host) {
    std::fprintf(stderr, "nic_model_fuzz_gpu: mapped memory at %p is %p on the device (%s): the replay "
                 "needs UVA, where the two are equal\n", host, device, cudaGetErrorString(e));
    std::exit(1);
  }
  std::memset(host, 0, bytes);
  mapped_blocks.push_back(host);
  return host;
}
uint8_t* mapped_arena(uint64_t bytes) { return static_cast<uint8_t*>(mapped(bytes)); }

struct Lane {
  NicModelRig* rig = nullptr;
  std::vector<uint8_t> shadow;
  std::unique_ptr<fz::Oracle> oracle{new fz::Oracle};  // ~40 KB: on the heap
  fz::FuzzCase fuzz_case{};
  uint64_t index = 0;  // case number
  bool live = false;
  uint32_t predicted = 0, cqes_before = 0;
};

uint64_t parse(const char* flag, const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') {
    std::fprintf(stderr, "nic_model_fuzz_gpu: %s wants a decimal number, got '%s'\n", flag, text);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t wqes = 1000000, seed = 1, rigs = 128;
  bool host_engine = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--quick") { wqes = 10000; continue; }
    if (flag == "--host-engine") { host_engine = true; continue; }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "nic_model_fuzz_gpu: %s wants a value\n", flag.c_str());
      return 2;
    }
    if (flag == "--wqes") wqes = parse("--wqes", argv[++i]);
    else if (flag == "--seed") seed = parse("--seed", argv[++i]);
    else if (flag == "--rigs") rigs = parse("--rigs", argv[++i]);
    else {
      std::fprintf(stderr, "nic_model_fuzz_gpu: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (rigs == 0 || rigs > 65535) {
    std::fprintf(stderr, "nic_model_fuzz_gpu: --rigs wants 1..65535\n");
    return 2;
  }
  if (!host_engine) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      cudaGetLastError();
      std::fprintf(stderr, "no CUDA device: skipped\n");
      return dissect::gputest::SKIP;
    }
  }

  // The rigs: the object itself in mapped memory too (its MR table, QP contexts and NicTables are
  // members the engine reads and writes), its arena from the rig's allocator hook.
  std::vector<Lane> lanes(rigs);
  Slot* slots = host_engine ? new Slot[rigs]() : static_cast<Slot*>(mapped(sizeof(Slot) * rigs));
  for (Lane& lane : lanes) {
    lane.rig = host_engine ? new NicModelRig()
                           : new (mapped(sizeof(NicModelRig)))
                                 NicModelRig(&mapped_arena, dissect::softnic::MR_IN_HOST_MEMORY);
    lane.shadow.resize(lane.rig->arena_bytes);
  }

  fz::Tally t;
  uint8_t payload[m::RC_MAX_INLINE_BY_DS];
  uint64_t launches = 0;
  for (uint64_t first = 0; t.wqes < wqes; first += rigs) {
    for (uint64_t k = 0; k < rigs; ++k) {  // generate, exactly as the CPU driver's run_case
      Lane& lane = lanes[k];
      lane.index = first + k;
      fz::Rng rng{seed * 0x2545f4914f6cdd1dull ^ (lane.index + 1) * 0x9e3779b97f4a7c15ull};
      fz::generate(rng, *lane.rig, lane.fuzz_case, payload);
      std::memcpy(lane.shadow.data(), lane.rig->base, lane.rig->arena_bytes);
      lane.oracle->start(*lane.rig, lane.shadow.data());
      lane.live = true;
    }
    for (uint32_t s = 0; s < fz::kMaxSteps; ++s) {
      bool any = false;
      for (uint64_t k = 0; k < rigs; ++k) {  // the doorbell and the oracle's prediction per live case
        Lane& lane = lanes[k];
        slots[k].run = 0;
        if (!lane.live || s >= lane.fuzz_case.steps) { lane.live = false; continue; }
        const fz::Step& step = lane.fuzz_case.step[s];
        *lane.rig->doorbell_register() = step.doorbell;
        std::memcpy(lane.shadow.data() + lane.rig->doorbell.offset, &step.doorbell, 8);
        lane.cqes_before = lane.oracle->written_count;
        lane.predicted = lane.oracle->service(step.budget);
        if (lane.oracle->unsafe) {  // would reach memory outside the arena: never run it
          ++t.skipped;
          lane.live = false;
          continue;
        }
        slots[k] = Slot{&lane.rig->requester(), &lane.rig->nic, step.budget, 1, 0};
        any = true;
      }
      if (!any) break;
      if (host_engine) {
        for (uint64_t k = 0; k < rigs; ++k) {
          if (slots[k].run) slots[k].executed = sn::service_qp(*slots[k].qp, *slots[k].nic, slots[k].budget);
        }
      } else {
        service_step<<<static_cast<unsigned>(rigs), 1>>>(slots, static_cast<uint32_t>(rigs));
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        ++launches;
        if (e != cudaSuccess) {  // a fault in the engine: sticky, the context is gone
          std::fprintf(stderr, "cases %" PRIu64 "..%" PRIu64 " step %u: kernel failed: %s\n", first,
                       first + rigs - 1, s, cudaGetErrorString(e));
          fz::print_summary("nic_model_fuzz_gpu", seed, t, 1);
          return 1;
        }
      }
      for (uint64_t k = 0; k < rigs; ++k) {  // the CPU driver's per-step checks
        Lane& lane = lanes[k];
        if (!slots[k].run) continue;
        const NicModelRig& rig = *lane.rig;
        fz::adopt_timestamps(rig, lane.shadow.data(), *lane.oracle, lane.cqes_before);
        const bool same_bytes = fz::compare_arena(rig, lane.shadow.data(), t, lane.index, s);
        const bool same_state = fz::compare_state(rig.qps[NicModelRig::kRequester], rig.qps[NicModelRig::kResponder],
                                                  lane.oracle->qp, slots[k].executed, lane.predicted, t,
                                                  lane.index, s);
        if (!same_bytes || !same_state) lane.live = false;
      }
    }
    for (const Lane& lane : lanes) {  // a case skipped as unsafe is not counted, as on the CPU
      if (lane.oracle->unsafe) continue;
      t.wqes += lane.rig->qps[NicModelRig::kRequester].counters.wqes_executed;
      ++t.cases;
      fz::check_flushes(*lane.rig, t, lane.index);
    }
  }
  std::printf("%s engine, %" PRIu64 " rigs, %" PRIu64 " kernel launches\n", host_engine ? "host" : "GPU",
              rigs, launches);
  const int rc = fz::print_summary("nic_model_fuzz_gpu", seed, t);
  for (Lane& lane : lanes) {
    if (host_engine) delete lane.rig; else lane.rig->~NicModelRig();
  }
  if (host_engine) delete[] slots;
  for (void* p : mapped_blocks) cudaFreeHost(p);
  return rc;
}
