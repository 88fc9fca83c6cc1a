// Every wait is bounded, and its message names the QP and the index it waited for.
#include <gtest/gtest.h>

#include <string>

#include "dissect/gda/gda.h"
#include "dissect/gda/recv.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;

namespace {

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", v);
  return text;
}

TEST(Timeout, CompletionWaitNamesTheQpAndTheIndex) {
  Loopback lb({}, 4096);
  lb.softnic->stop();  // nothing will ever complete
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest r{lb.source_address(), lb.source_mr.lkey, 8, lb.destination_address(),
                      lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end, 20'000'000)),
            gda::Status::timeout);
  const std::string message = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("QP " + hex(qp.qpn)), std::string::npos) << message;
  EXPECT_NE(message.find("index " + std::to_string(end)), std::string::npos) << message;
}

TEST(Timeout, UnsignaledTailIsReportedNotHung) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest r{lb.source_address(), lb.source_mr.lkey, 8, lb.destination_address(),
                      lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::unsignaled, &end), gda::Status::ok);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end, 20'000'000)),
            gda::Status::timeout);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("completion"), std::string::npos);
}

TEST(Timeout, ReceiveWaitNamesTheQp) {
  dissect::nic::QpAttributes attributes;
  attributes.rq_wqes = 4;
  Loopback lb(attributes, 4096);
  const auto rq = lb.responder->recv_handle();
  gda::ImmediateCompletion completion{};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(gda::wait_receive(rq, &completion, lb.responder->qpn(), 10'000'000), gda::Status::timeout);
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("QP " + hex(lb.responder->qpn())),
            std::string::npos);
}

}  // namespace
