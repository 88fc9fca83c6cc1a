// The doctor's verdicts from fake inputs: which checks pass, warn, fail or skip, and the exit code,
// per provider.
#include <gtest/gtest.h>

#include <sstream>

#include "dissect/doctor/doctor.h"

namespace dissect::doctor {
namespace {

Verdict verdict_of(const DoctorInputs& in, const std::string& prefix) {
  for (const CheckResult& r : evaluate(in)) {
    if (r.name.rfind(prefix, 0) == 0) return r.verdict;
  }
  ADD_FAILURE() << "no check named " << prefix;
  return Verdict::skip;
}

int exit_code(const DoctorInputs& in, std::string* text = nullptr) {
  std::ostringstream out;
  const int code = run_doctor(in, out);
  if (text) *text = out.str();
  return code;
}

DoctorInputs bare_machine() {  // this build machine: no GPU, no NIC, 64 MiB+ memlock
  DoctorInputs in;
  in.memlock_soft_bytes = 8ull << 20;
  return in;
}

PciDevice pci(const std::string& name, std::vector<std::string> chain, int numa) {
  PciDevice d;
  d.name = name;
  d.address = chain.back();
  d.chain = std::move(chain);
  d.numa_node = numa;
  return d;
}

DoctorInputs gpu_and_nic_machine() {
  DoctorInputs in;
  in.provider = "mlx5";
  in.cuda.library_found = true;
  in.cuda.init_result = 0;
  in.cuda.device_count = 1;
  in.cuda.driver_version = 13000;
  in.cuda.dma_buf_supported = {1};
  in.gpus = {pci("0000:03:00.0", {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:03:00.0"}, 0)};
  NicInfo nic;
  nic.device = pci("mlx5_0", {"pci0000:00", "0000:00:01.0", "0000:01:00.0", "0000:04:00.0"}, 0);
  nic.ports = {NicPort{1, "InfiniBand", "4: ACTIVE"}};
  nic.numa_cpus = {0, 1, 2, 3};
  in.nics = {nic};
  in.allowed_cpus = {0, 1, 2, 3, 4, 5, 6, 7};
  in.nvidia_params_found = true;
  in.peer_mapping_override = true;
  in.gdrdrv = true;
  in.memlock_soft_bytes = std::nullopt;
  in.clocks = {CpuClock{0, "performance", 3000000}};
  return in;
}

TEST(DoctorVerdicts, NoGpuNoNicSoftnicExitsZeroAndSaysSo) {
  std::string text;
  EXPECT_EQ(exit_code(bare_machine(), &text), 0);
  EXPECT_NE(text.find("[WARN] GPU and driver"), std::string::npos);
  EXPECT_NE(text.find("[WARN] RDMA NICs"), std::string::npos);
  EXPECT_NE(text.find("labelled softnic"), std::string::npos);
  EXPECT_EQ(text.find("[FAIL]"), std::string::npos);
  EXPECT_EQ(verdict_of(bare_machine(), "PeerMappingOverride"), Verdict::skip);
  EXPECT_EQ(verdict_of(bare_machine(), "GPU-NIC PCIe distance"), Verdict::skip);
}

TEST(DoctorVerdicts, NoGpuNoNicMlx5Fails) {
  DoctorInputs in = bare_machine();
  in.provider = "mlx5";
  std::string text;
  EXPECT_EQ(exit_code(in, &text), 1);
  EXPECT_EQ(verdict_of(in, "GPU and driver"), Verdict::fail);
  EXPECT_EQ(verdict_of(in, "RDMA NICs"), Verdict::fail);
  EXPECT_NE(text.find("required check(s) failed"), std::string::npos);
}

TEST(DoctorVerdicts, HealthyMachinePassesEverything) {
  const DoctorInputs in = gpu_and_nic_machine();
  for (const CheckResult& r : evaluate(in)) {
    EXPECT_EQ(r.verdict, Verdict::ok) << r.name << ": " << r.found << " -- " << r.advice;
  }
  EXPECT_EQ(exit_code(in), 0);
}

TEST(DoctorVerdicts, PeerMappingOverrideMissingWarnsUnlessRoot) {
  DoctorInputs in = gpu_and_nic_machine();
  in.peer_mapping_override = false;
  in.running_as_root = false;
  EXPECT_EQ(verdict_of(in, "PeerMappingOverride"), Verdict::warn);
  EXPECT_EQ(exit_code(in), 0);  // CPU-assisted doorbells remain
  in.running_as_root = true;
  EXPECT_EQ(verdict_of(in, "PeerMappingOverride"), Verdict::ok);
}

TEST(DoctorVerdicts, Memlock64KiBFailsForNicProvidersOnly) {
  DoctorInputs in = gpu_and_nic_machine();
  in.memlock_soft_bytes = 64ull << 10;
  EXPECT_EQ(verdict_of(in, "locked-memory"), Verdict::fail);
  EXPECT_EQ(exit_code(in), 1);
  in.provider = "ibverbs";
  EXPECT_EQ(verdict_of(in, "locked-memory"), Verdict::fail);
  in.provider = "softnic";
  EXPECT_EQ(verdict_of(in, "locked-memory"), Verdict::warn);
  EXPECT_EQ(exit_code(in), 0);
}

TEST(DoctorVerdicts, NoDmaBufNoPeermemFailsMlx5) {
  DoctorInputs in = gpu_and_nic_machine();
  in.cuda.dma_buf_supported = {0};
  in.nvidia_peermem = false;
  EXPECT_EQ(verdict_of(in, "GPU memory registration"), Verdict::fail);
  in.nvidia_peermem = true;
  EXPECT_EQ(verdict_of(in, "GPU memory registration"), Verdict::ok);
}

TEST(DoctorVerdicts, NicOnOtherSocketWarns) {
  DoctorInputs in = gpu_and_nic_machine();
  in.nics[0].device = pci("mlx5_0", {"pci0000:80", "0000:80:01.0", "0000:84:00.0"}, 1);
  EXPECT_EQ(verdict_of(in, "GPU-NIC PCIe distance"), Verdict::warn);
}

TEST(DoctorVerdicts, BadDissectNicFailsForNicProviders) {
  DoctorInputs in = gpu_and_nic_machine();
  in.dissect_nic = "mlx5_7";
  EXPECT_EQ(verdict_of(in, "GPU-NIC PCIe distance"), Verdict::fail);
}

TEST(DoctorVerdicts, NoFreeCoresOnNicNodeWarns) {
  DoctorInputs in = gpu_and_nic_machine();
  in.allowed_cpus = {8, 9};
  EXPECT_EQ(verdict_of(in, "NIC NUMA node"), Verdict::warn);
}

TEST(DoctorVerdicts, InactivePortAndNonMlx5Nic) {
  DoctorInputs in = gpu_and_nic_machine();
  in.nics[0].ports[0].state = "1: DOWN";
  EXPECT_EQ(verdict_of(in, "RDMA NICs"), Verdict::fail);
  in.nics[0].ports[0].state = "4: ACTIVE";
  in.nics[0].device.name = "rxe0";
  EXPECT_EQ(verdict_of(in, "RDMA NICs"), Verdict::fail);
  in.provider = "ibverbs";
  EXPECT_EQ(verdict_of(in, "RDMA NICs"), Verdict::ok);
}

TEST(DoctorVerdicts, ClocksAndGdrcopyOnlyWarn) {
  DoctorInputs in = gpu_and_nic_machine();
  in.clocks = {CpuClock{0, "powersave", 800000}, CpuClock{1, "performance", 3000000}};
  in.gdrdrv = false;
  EXPECT_EQ(verdict_of(in, "CPU clock states"), Verdict::warn);
  EXPECT_EQ(verdict_of(in, "GDRCopy"), Verdict::warn);
  EXPECT_EQ(exit_code(in), 0);
}

TEST(DoctorVerdicts, OneLinePerCheckInOrder) {
  std::string text;
  exit_code(gpu_and_nic_machine(), &text);
  const char* order[] = {"GPU and driver", "RDMA NICs", "PeerMappingOverride",
                         "GPU memory registration", "locked-memory", "GPU-NIC PCIe distance",
                         "NIC NUMA node", "GDRCopy", "CPU clock states"};
  size_t last = 0;
  for (const char* name : order) {
    const size_t at = text.find(name);
    ASSERT_NE(at, std::string::npos) << name;
    EXPECT_GT(at, last) << name;
    last = at;
  }
}

}  // namespace
}  // namespace dissect::doctor
