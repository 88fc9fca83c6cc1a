// `dissect proxy-clock`: Appendix C.1 on the CPU path. put+completion of one 8 B write measured
// right after an idle period (cold) and after a busy warm-up (warm), with each worker CPU's clock
// state (scaling_cur_freq, scaling_governor) read before and after each measurement.
#include <chrono>
#include <thread>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "proxy_bench_rig.h"

namespace dissect::bench {
namespace {

template <typename Handoff>
Summary put_completion(ProxyBenchRig& rig, uint64_t iterations, uint64_t busy_until_ns) {
  const proxy::RingHandle ring = rig.proxy->ring(0);
  std::vector<double> samples;
  for (uint64_t i = 0; samples.size() < iterations; ++i) {
    rig.a[1] = i + 1;
    const uint64_t t0 = now_ns();
    check(proxy::wait_completion(ring, enqueue_or_throw<Handoff>(ring, write_word(0, 1))), "completion");
    const uint64_t t1 = now_ns();
    if (rig.b[1] != i + 1) throw Error("proxy-clock: payload " + std::to_string(i + 1) + " did not land");
    if (now_ns() >= busy_until_ns && samples.size() < iterations) samples.push_back((t1 - t0) / 1e3);
  }
  return summarize(samples);
}

template <typename Handoff>
std::vector<ProxyClockState> measure(const ProxyClockOptions& o) {
  proxy::ProxyConfig config;
  config.batch = 1;
  config.handoff = o.handoff;
  ProxyBenchRig rig(config, o.placement, 64);
  std::vector<ProxyClockState> states(2);
  // Cold: engine and worker idle (stopped) for idle_ms, then measured at once.
  rig.softnic->stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(o.idle_ms));
  states[0].state = "cold";
  rig.proxy->start();
  states[0].clocks_before = rig.worker_clocks();
  rig.softnic->start();
  states[0].put_completion = put_completion<Handoff>(rig, o.iterations, 0);
  states[0].clocks_after = rig.worker_clocks();
  // Warm: the same loop kept busy for warmup_ms first.
  states[1].state = "warm";
  states[1].clocks_before = rig.worker_clocks();
  states[1].put_completion = put_completion<Handoff>(rig, o.iterations, now_ns() + o.warmup_ms * 1'000'000);
  states[1].clocks_after = rig.worker_clocks();
  return states;
}

}  // namespace

std::vector<ProxyClockState> measure_proxy_clock(const ProxyClockOptions& o) {
  return o.handoff == proxy::Handoff::tuned ? measure<proxy::tuned>(o) : measure<proxy::baseline>(o);
}

namespace {

int run_proxy_clock(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick", "500 ms idle, 300 ms warm-up, 500 operations, one run");
  ProxyClockOptions o;
  o.idle_ms = arguments.integer("idle-ms", quick ? 500 : 2000, 0, 600'000,
                                "idle time before the cold measurement, ms (the CPU clock may drop)");
  o.warmup_ms = arguments.integer("warmup-ms", quick ? 300 : 1000, 0, 600'000,
                                  "busy time before the warm measurement, ms");
  o.iterations = arguments.integer("iterations", quick ? 500 : 2000, 10, 100'000'000,
                                   "timed 8 B put+completions per measurement (cold and warm)");
  const uint64_t runs = arguments.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS);
  o.handoff = read_handoff(arguments);
  const std::string cores = read_cores(arguments, o.placement);
  arguments.check_all_used();
  // Each run is a fresh rig, idled and then warmed again; the labels and clocks are the first
  // run's, every run's put+completion is one run of the metric.
  Progress progress("proxy-clock", runs);
  std::vector<ProxyClockState> states;
  std::vector<std::vector<Summary>> put_completion;
  for (uint64_t run = 0; run < runs; ++run) {
    const std::vector<ProxyClockState> measured = measure_proxy_clock(o);
    if (run == 0) states = measured, put_completion.resize(measured.size());
    for (size_t i = 0; i < measured.size(); ++i) put_completion[i].push_back(measured[i].put_completion);
    progress.done("run " + std::to_string(run + 1) + " (cold and warm)");
  }
  for (size_t i = 0; i < states.size(); ++i) {
    const ProxyClockState& s = states[i];
    Result r = proxy_result("proxy-clock", "proxy " + std::string(proxy::to_string(o.handoff)) + ", " + s.state);
    r.knobs = {{"handoff", proxy::to_string(o.handoff)}, {"workers (T)", "1"}, {"rings (R)", "1"},
               {"batch (B)", "1"}, {"state", s.state}, {"idle_ms", std::to_string(o.idle_ms)},
               {"warmup_ms", std::to_string(o.warmup_ms)},
               {"pinning", cores.empty() ? "unpinned" : "cores " + cores}};
    r.knobs.emplace_back("iterations", std::to_string(o.iterations));
    r.metrics = {{"put+completion", "us", put_completion[i]}};
    r.payload_validated = true;
    add_clock_environment(s.clocks_before, "before.", &r.environment);
    add_clock_environment(s.clocks_after, "after.", &r.environment);
    report.add(r);
  }
  return 0;
}

const bool registered = register_experiment(
    {"proxy-clock", "Appendix C.1: worker clock state, cold vs warm put+completion (softnic, host producers)",
     run_proxy_clock, true});

}  // namespace
}  // namespace dissect::bench
