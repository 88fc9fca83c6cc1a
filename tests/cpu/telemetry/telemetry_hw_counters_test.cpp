// Hardware counters against a fake sysfs tree and a fake ethtool reader; the sampler thread.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "dissect/telemetry/hw_counters.h"
#include "test_support.h"

namespace dissect::telemetry {
namespace {

using test::TemporaryDirectory;
using test::write_text;

int64_t value_of(const HwCounterValues& values, const std::string& name) {
  for (const auto& counter : values)
    if (counter.name == name) return counter.value;
  ADD_FAILURE() << "no counter " << name;
  return -2;
}

class FakeSysfs {
 public:
  explicit FakeSysfs(const std::string& root) : root_(root) {}
  std::string port_path() const { return root_ + "/class/infiniband/mlx5_0/ports/1"; }
  void hw(const std::string& key, const std::string& value) { write_text(port_path() + "/hw_counters/" + key, value); }
  void port(const std::string& key, const std::string& value) { write_text(port_path() + "/counters/" + key, value); }

 private:
  std::string root_;
};

std::unique_ptr<Mlx5CounterSource> fake_mlx5(const std::string& root, EthtoolStats* ethtool) {
  EthtoolReader reader = [ethtool](const std::string&) -> std::optional<EthtoolStats> {
    if (ethtool == nullptr) return std::nullopt;
    return *ethtool;
  };
  return std::make_unique<Mlx5CounterSource>(root, "mlx5_0", 1, "eth0", reader);
}

TEST(TelemetryHwCounters, ReadsSysfsAndEthtoolUnderCanonicalNames) {
  TemporaryDirectory dir;
  FakeSysfs sysfs(dir.path());
  sysfs.hw("np_cnp_sent", "12\n");
  sysfs.port("port_xmit_data", "100\n");
  EthtoolStats ethtool{{"rx_pause", 7}, {"tx_vport_rdma_unicast_bytes", 4096}, {"rx_prio3_pause", 2}};
  auto source = fake_mlx5(dir.path(), &ethtool);
  HwCounterValues values = source->read(
      {"cnp_sent", "port_xmit_bytes", "pfc_rx_pause_frames", "delta_tx_bytes", "pfc_rx_frames_prio3", "no_such"});
  EXPECT_EQ(value_of(values, "cnp_sent"), 12);
  EXPECT_EQ(value_of(values, "port_xmit_bytes"), 400);  // 4-byte words
  EXPECT_EQ(value_of(values, "pfc_rx_pause_frames"), 7);  // fallback key
  EXPECT_EQ(value_of(values, "delta_tx_bytes"), 4096);
  EXPECT_EQ(value_of(values, "pfc_rx_frames_prio3"), 2);
  EXPECT_EQ(value_of(values, "no_such"), kUnreadable);
}

TEST(TelemetryHwCounters, UnreadableCountersReadMinusOne) {
  TemporaryDirectory dir;
  FakeSysfs sysfs(dir.path());
  // Tests run as root, so mode 000 would still be readable: use a directory and a non-number.
  std::filesystem::create_directories(sysfs.port_path() + "/hw_counters/np_cnp_sent");
  sysfs.hw("rp_cnp_handled", "n/a\n");
  sysfs.hw("out_of_buffer", "");
  auto source = fake_mlx5(dir.path(), nullptr);  // ethtool fails
  HwCounterValues values = source->read({"cnp_sent", "cnp_handled", "out_of_buffer", "ecn_marked_pkts",
                                         "pfc_tx_pause_frames"});
  for (const auto& counter : values) EXPECT_EQ(counter.value, kUnreadable) << counter.name;
  EXPECT_EQ(read_counter_file(dir.path() + "/missing"), kUnreadable);
}

TEST(TelemetryHwCounters, DeltasAgainstTheFirstUseBaseline) {
  TemporaryDirectory dir;
  FakeSysfs sysfs(dir.path());
  sysfs.hw("np_cnp_sent", "100\n");
  sysfs.hw("out_of_sequence", "5\n");
  sysfs.hw("packet_seq_err", "9\n");
  EthtoolStats ethtool{{"rx_vport_rdma_unicast_bytes", 1000}};
  HwCounterTracker tracker(fake_mlx5(dir.path(), &ethtool),
                           {"cnp_sent", "oos_drop_count", "seq_err_naks_rcvd", "delta_rx_bytes", "cnp_ignored"});
  EXPECT_EQ(value_of(tracker.deltas(), "cnp_sent"), kUnreadable) << "no baseline: never used";
  tracker.take_baseline();
  sysfs.hw("np_cnp_sent", "130\n");
  sysfs.hw("out_of_sequence", "5\n");
  sysfs.hw("packet_seq_err", "3\n");  // went backwards (counter reset): not a delta
  ethtool["rx_vport_rdma_unicast_bytes"] = 5096;
  tracker.take_baseline();  // a second first use changes nothing
  HwCounterValues deltas = tracker.deltas();
  ASSERT_EQ(deltas.size(), 5u);
  EXPECT_EQ(value_of(deltas, "cnp_sent"), 30);
  EXPECT_EQ(value_of(deltas, "oos_drop_count"), 0);
  EXPECT_EQ(value_of(deltas, "seq_err_naks_rcvd"), kUnreadable);
  EXPECT_EQ(value_of(deltas, "delta_rx_bytes"), 4096);
  EXPECT_EQ(value_of(deltas, "cnp_ignored"), kUnreadable);
}

TEST(TelemetryHwCounters, AllowListLimitsWhatIsReported) {
  TemporaryDirectory dir;
  HwCounterTracker all(fake_mlx5(dir.path(), nullptr), {});
  all.take_baseline();
  EXPECT_EQ(all.deltas().size(), mlx5_counter_table().size());
  HwCounterTracker some(fake_mlx5(dir.path(), nullptr), {"cnp_sent"});
  some.take_baseline();
  EXPECT_EQ(some.deltas().size(), 1u);
  EXPECT_EQ(some.sample(congestion_counter_names()).size(), 1u);
}

TEST(TelemetryHwCounters, EthtoolOnAMissingInterfaceFails) {
  std::string reason;
  EXPECT_FALSE(read_ethtool_stats("dissect_none0", &reason).has_value());
  EXPECT_FALSE(reason.empty());
  EXPECT_FALSE(read_ethtool_stats("", &reason).has_value());
}

TEST(TelemetryHwCounters, FileCarriesHardwareDeltas) {
  TemporaryDirectory sys;
  TemporaryDirectory out;
  FakeSysfs sysfs(sys.path());
  sysfs.hw("np_ecn_marked_roce_packets", "10\n");
  Config config = test::test_config(out.path());
  config.hw_counters = {"ecn_marked_pkts", "cnp_sent"};
  Session session(config);
  int device = session.register_device(DeviceInfo{"mlx5_0", "eth0", "mlx5", 1}, fake_mlx5(sys.path(), nullptr));
  session.track_qp(device, 0, 1);  // first use: baseline
  sysfs.hw("np_ecn_marked_roce_packets", "25\n");
  ASSERT_TRUE(session.finalize());
  test::JsonValue document = test::parse_json(test::read_text_file(session.output_path()));
  EXPECT_TRUE(test::validate(document, test::load_schema()).empty());
  const test::JsonValue& hardware = document.at("devices").at(0).at("hw_counters");
  EXPECT_EQ(hardware.size(), 2u);
  EXPECT_EQ(hardware.at("ecn_marked_pkts").get<int64_t>(), 15);
  EXPECT_EQ(hardware.at("cnp_sent").get<int64_t>(), -1);
}

// A softnic-like provider: model counters under the canonical names.
class ModelCounters : public HwCounterSource {
 public:
  std::vector<std::string> names() const override { return {"cnp_sent", "out_of_buffer"}; }
  HwCounterValues read(const std::vector<std::string>& names) override {
    HwCounterValues values;
    for (const auto& name : names) values.push_back({name, name == "cnp_sent" ? ++reads : kUnreadable});
    return values;
  }
  int64_t reads = 0;
};

TEST(TelemetryHwCounters, SamplerStartsStopsAndWritesSamples) {
  TemporaryDirectory out;
  Config config = test::test_config(out.path());
  config.sample_ms = 5;
  Session session(config);
  int device = session.register_device(DeviceInfo{"softnic0", "", "softnic", 1}, std::make_unique<ModelCounters>());
  QpTelemetry qp = session.track_qp(device, 0, 1);
  on_post(qp.counters, PostInfo{4096, mlx5::MLX5_OPCODE_RDMA_WRITE, 64});
  session.start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (session.num_samples() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_GE(session.num_samples(), 3u) << "the sampler did not tick within 10 s";
  auto stop_started = std::chrono::steady_clock::now();
  ASSERT_TRUE(session.finalize());  // stops and joins the sampler first
  EXPECT_LT(std::chrono::steady_clock::now() - stop_started, std::chrono::seconds(5));
  size_t frozen = session.num_samples();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(session.num_samples(), frozen) << "the sampler kept running after finalize";

  test::JsonValue document = test::parse_json(test::read_text_file(session.output_path()));
  std::vector<std::string> errors = test::validate(document, test::load_schema());
  EXPECT_TRUE(errors.empty()) << errors.front();
  const auto& samples = document.at("hw_samples");
  ASSERT_EQ(samples.size(), frozen);
  uint64_t previous_time = 0;
  for (const auto& sample : samples) {
    EXPECT_EQ(sample.at("tx_bytes").get<int64_t>(), 4096);
    EXPECT_EQ(sample.at("device_id").get<int64_t>(), device);
    EXPECT_GT(static_cast<uint64_t>(sample.at("time_ns").get<int64_t>()), previous_time);
    previous_time = static_cast<uint64_t>(sample.at("time_ns").get<int64_t>());
    EXPECT_GE(sample.at("counters").at("cnp_sent").get<int64_t>(), 1);
    EXPECT_EQ(sample.at("counters").at("out_of_buffer").get<int64_t>(), -1);
  }
}

TEST(TelemetryHwCounters, SamplerStopsWhenFull) {
  TemporaryDirectory out;
  Config config = test::test_config(out.path());
  config.sample_ms = 1;
  SessionOptions options;
  options.max_samples = 2;
  Session session(config, options);
  int device = session.register_device(DeviceInfo{"softnic0", "", "softnic", 1}, std::make_unique<ModelCounters>());
  session.track_qp(device, 0, 1);
  testing::internal::CaptureStderr();
  session.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  session.finalize();
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(session.num_samples(), 2u);
  EXPECT_NE(err.find("hw_samples is full"), std::string::npos) << err;
}

}  // namespace
}  // namespace dissect::telemetry
