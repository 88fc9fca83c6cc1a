// The per-rank JSON file: schema, contents, and the page's failure rules.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "dissect/telemetry/json.h"
#include "dissect/common/output_file.h"
#include "test_support.h"

namespace dissect::telemetry {
namespace {

using test::JsonValue;
using test::TemporaryDirectory;

int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

// Drives some traffic: 2 channels, 3 QPs, writes and completions, receives, a CQ error.
void drive_traffic(Session& session) {
  int device = session.register_device(DeviceInfo{"softnic0", "", "softnic", 1}, nullptr);
  QpTelemetry qps[3] = {session.track_qp(device, 0, 100), session.track_qp(device, 0, 101),
                        session.track_qp(device, 1, 102)};
  for (int i = 0; i < 100; ++i) {
    QpTelemetry& qp = qps[i % 3];
    bool sample = on_post(qp.counters, PostInfo{uint64_t(64) << (i % 5), mlx5::MLX5_OPCODE_RDMA_WRITE, 64});
    on_doorbell(qp.counters, 1);
    on_cq_poll(qp.counters);
    if (sample) {
      on_completion_sampled(qp.counters, static_cast<uint64_t>(i) * 1000);
    } else {
      on_completion(qp.counters);
    }
    on_requests_completed(qp.channel);
  }
  on_recv_posted(qps[2].counters, 4);
  on_receive(qps[2].counters, 256);
  on_cq_error(qps[1].counters);
}

JsonValue write_and_parse(Session& session) {
  EXPECT_TRUE(session.finalize());
  return test::parse_json(test::read_text_file(session.output_path()));
}

TEST(TelemetryOutput, FileNameCarriesHostUidPid) {
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  std::string name = session.output_file_name();
  EXPECT_EQ(name.rfind("dissect_telemetry_", 0), 0u);
  std::string suffix = "_" + std::to_string(getuid()) + "_" + std::to_string(getpid()) + ".json";
  EXPECT_EQ(name.substr(name.size() - suffix.size()), suffix);
}

TEST(TelemetryOutput, DefaultFileValidatesAndHasNoSamplingKeys) {
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  drive_traffic(session);
  std::string text = (session.finalize(), test::read_text_file(session.output_path()));
  JsonValue document = test::parse_json(text);
  std::vector<std::string> errors = test::validate(document, test::load_schema());
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(text.find("latency_sample_interval"), std::string::npos);
  EXPECT_EQ(text.find("num_wqe_sampled"), std::string::npos);
  EXPECT_EQ(text.find("hw_samples"), std::string::npos);

  const JsonValue& device = document.at("devices").at(0);
  EXPECT_EQ(device.at("num_channels").get<int64_t>(), 2);
  EXPECT_EQ(device.at("active_channels").get<int64_t>(), 2);
  EXPECT_EQ(device.at("num_cq_errors").get<int64_t>(), 1);
  EXPECT_EQ(device.at("cq_poll_count").get<int64_t>(), 100);
  EXPECT_EQ(device.at("rx_bytes").get<int64_t>(), 256);
  EXPECT_EQ(device.at("num_doorbells").get<int64_t>(), 100);
  int64_t tx = 0;
  for (int i = 0; i < 100; ++i) tx += int64_t(64) << (i % 5);
  EXPECT_EQ(device.at("tx_bytes").get<int64_t>(), tx);
  int64_t size_total = 0;
  for (const auto& bucket : device.at("wqe_size_stats")) size_total += bucket.at("num_wqe").get<int64_t>();
  EXPECT_EQ(size_total, 100);
  EXPECT_EQ(device.at("wqe_size_stats").size(), 5u);  // only non-empty buckets

  // Channel totals are the sums of their QPs; at N = 1 the histogram covers every completion.
  int64_t requests = 0;
  for (const auto& channel : device.at("channels")) {
    int64_t sent = 0, completed = 0;
    for (const auto& qp : channel.at("queue_pairs")) {
      sent += qp.at("num_wqe_sent").get<int64_t>();
      completed += qp.at("num_wqe_completed").get<int64_t>();
      int64_t histogram = 0;
      for (const auto& bucket : qp.at("wqe_completion_histogram")) histogram += bucket.at("num_wqe").get<int64_t>();
      EXPECT_EQ(histogram, qp.at("num_wqe_completed").get<int64_t>());
      EXPECT_EQ(qp.at("wqe_completion_histogram").size(), 5u);
    }
    EXPECT_EQ(channel.at("num_wqe_sent").get<int64_t>(), sent);
    EXPECT_EQ(channel.at("num_wqe_completed").get<int64_t>(), completed);
    requests += channel.at("num_req_completed").get<int64_t>();
  }
  EXPECT_EQ(requests, 100);
}

TEST(TelemetryOutput, SampledFileCarriesIntervalAndSampledCountsThatSumTheHistogram) {
  TemporaryDirectory dir;
  Config config = test::test_config(dir.path());
  config.latency_sample = 4;
  Session session(config);
  drive_traffic(session);
  JsonValue document = write_and_parse(session);
  std::vector<std::string> errors = test::validate(document, test::load_schema());
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(document.at("latency_sample_interval").get<int64_t>(), 4);
  int64_t sampled_total = 0;
  for (const auto& channel : document.at("devices").at(0).at("channels")) {
    int64_t channel_sampled = 0;
    for (const auto& qp : channel.at("queue_pairs")) {
      int64_t histogram = 0;
      for (const auto& bucket : qp.at("wqe_completion_histogram")) histogram += bucket.at("num_wqe").get<int64_t>();
      EXPECT_EQ(histogram, qp.at("num_wqe_sampled").get<int64_t>());
      EXPECT_EQ(qp.at("num_wqe_completed").get<int64_t>(), qp.at("num_wqe_sent").get<int64_t>()) << "not scaled by N";
      channel_sampled += histogram;
    }
    EXPECT_EQ(channel.at("num_wqe_sampled").get<int64_t>(), channel_sampled);
    sampled_total += channel_sampled;
  }
  EXPECT_EQ(sampled_total, 9 + 9 + 9);  // 34, 33, 33 posts per QP: ceil(n / 4) each
}

TEST(TelemetryOutput, SchemaValidatorRejectsBrokenDocuments) {
  JsonValue schema = test::load_schema();
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  drive_traffic(session);
  std::string text = session.document();
  // A counter of the wrong type, a missing key, and an unknown key must each be caught.
  auto broken = [&](const std::string& from, const std::string& to) {
    std::string copy = text;
    copy.replace(copy.find(from), from.size(), to);
    return test::validate(test::parse_json(copy), schema);
  };
  EXPECT_FALSE(broken("\"num_cq_errors\": 1", "\"num_cq_errors\": \"1\"").empty());
  EXPECT_FALSE(broken("\"cq_poll_count\"", "\"cq_poll_counts\"").empty());
  EXPECT_FALSE(broken("\"transport\": \"test\"", "\"transport\": 5").empty());
}

TEST(TelemetryOutput, JsonStringsAreEscaped) {
  const Json json = {{"na\"me", "va\nlue\t\x01"}, {"list", {-1, nullptr}}};
  const std::string text = dump_document(json);
  EXPECT_NE(text.find("\"na\\\"me\": \"va\\nlue\\t\\u0001\""), std::string::npos) << text;
  JsonValue parsed = test::parse_json(text);
  EXPECT_EQ(parsed.at("na\"me").get<std::string>(), "va\nlue\t\x01");
  EXPECT_EQ(parsed.at("list").at(0).get<int64_t>(), -1);
  EXPECT_TRUE(parsed.at("list").at(1).is_null());
}

// The layout the hand-written writer had, which docs/telemetry.md shows and files diff by.
TEST(TelemetryOutput, JsonLayoutIsTwoSpacesOneMemberPerLine) {
  const Json json = {{"a", 1}, {"b", Json::array()}, {"c", {{"d", 0.25}}}};
  EXPECT_EQ(dump_document(json), "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": {\n    \"d\": 0.25\n  }\n}\n");
}

TEST(TelemetryOutput, InvalidUtf8IsReplacedNotThrown) {
  const Json json = {{"host_name", std::string("bad\xff")}};
  EXPECT_NE(dump_document(json).find("bad\xef\xbf\xbd"), std::string::npos);
}

TEST(TelemetryOutput, ParserRefusesDuplicateKeys) {
  EXPECT_THROW(test::parse_json("{\"a\": {\"b\": 1, \"b\": 2}}"), std::runtime_error);
  EXPECT_NO_THROW(test::parse_json("{\"a\": {\"b\": 1}, \"c\": {\"b\": 2}}"));
}

// The "run": some computation whose result must not depend on telemetry.
int64_t run_with_telemetry(Session& session) {
  int64_t result = 0;
  for (int i = 1; i <= 10; ++i) result += i * i;
  drive_traffic(session);
  session.finalize();
  return result;
}

TEST(TelemetryOutput, UnwritableDirectoryDropsOnlyTheFileWithOneLine) {
  TemporaryDirectory dir;
  std::string regular_file = dir.path() + "/not_a_directory";
  test::write_text(regular_file, "x");
  std::string impossible = regular_file + "/out";
  Session session(test::test_config(impossible));
  testing::internal::CaptureStderr();
  int64_t result = run_with_telemetry(session);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(result, 385);
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find(session.output_path()), std::string::npos) << err;
  EXPECT_NE(err.find("Not a directory"), std::string::npos) << err;
  EXPECT_FALSE(session.finalize());
}

TEST(TelemetryOutput, SymlinkAtTheOutputPathIsNotFollowed) {
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  std::string target = dir.path() + "/victim";
  test::write_text(target, "precious");
  ASSERT_EQ(::symlink(target.c_str(), session.output_path().c_str()), 0);
  testing::internal::CaptureStderr();
  drive_traffic(session);
  EXPECT_FALSE(session.finalize());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(test::read_text_file(target), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(session.output_path()));
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find("symbolic link"), std::string::npos) << err;
  // No temporary file is left behind.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 2u);
}

TEST(TelemetryOutput, AnotherUsersFileIsNotReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to create a file owned by another user";
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  test::write_text(session.output_path(), "theirs");
  ASSERT_EQ(::chown(session.output_path().c_str(), 4242, 4242), 0);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(session.finalize());
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(test::read_text_file(session.output_path()), "theirs");
  EXPECT_NE(err.find("owned by uid 4242"), std::string::npos) << err;
}

TEST(TelemetryOutput, OurOwnOlderFileIsReplaced) {
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  test::write_text(session.output_path(), "old");
  EXPECT_TRUE(session.finalize());
  EXPECT_NO_THROW(test::parse_json(test::read_text_file(session.output_path())));
}

TEST(TelemetryOutput, WriteFileNoFollowRejectsADirectoryAtThePath) {
  TemporaryDirectory dir;
  std::filesystem::create_directory(dir.path() + "/name.json");
  WriteOutcome outcome = write_file_no_follow(dir.path(), "name.json", "{}");
  EXPECT_FALSE(outcome.written);
  EXPECT_NE(outcome.reason.find("not a regular file"), std::string::npos) << outcome.reason;
}

TEST(TelemetryOutput, QpUntrackedAppearsInTheFile) {
  TemporaryDirectory dir;
  SessionOptions options;
  options.limits = RegistryLimits{4, 1, 1};
  Session session(test::test_config(dir.path()), options);
  int device = session.register_device(DeviceInfo{"softnic0", "", "softnic", 1}, nullptr);
  testing::internal::CaptureStderr();
  QpTelemetry tracked = session.track_qp(device, 0, 1);
  QpTelemetry untracked = session.track_qp(device, 0, 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(tracked.counters, nullptr);
  EXPECT_EQ(untracked.counters, nullptr);
  EXPECT_EQ(count_lines(err), 1) << err;
  on_post(untracked.counters, PostInfo{64, mlx5::MLX5_OPCODE_RDMA_WRITE, 64});
  JsonValue document = write_and_parse(session);
  const JsonValue& json_device = document.at("devices").at(0);
  EXPECT_EQ(json_device.at("num_qp_untracked").get<int64_t>(), 1);
  EXPECT_EQ(json_device.at("channels").at(0).at("num_qp_untracked").get<int64_t>(), 1);
  EXPECT_EQ(json_device.at("tx_bytes").get<int64_t>(), 0);
}

TEST(TelemetryOutput, UnusedDevicesAreLeftOut) {
  TemporaryDirectory dir;
  Session session(test::test_config(dir.path()));
  session.register_device(DeviceInfo{"softnic0", "", "softnic", 1}, nullptr);
  int used = session.register_device(DeviceInfo{"softnic1", "", "softnic", 1}, nullptr);
  session.track_qp(used, 0, 1);
  JsonValue document = write_and_parse(session);
  ASSERT_EQ(document.at("devices").size(), 1u);
  EXPECT_EQ(document.at("devices")[0].at("roce_device").get<std::string>(), "softnic1");
}

}  // namespace
}  // namespace dissect::telemetry
