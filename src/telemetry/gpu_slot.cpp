// GpuQpSlot (telemetry/gpu_slot.h). Compiled into dissect_softnic_gpu (see CMakeLists.txt here):
// it needs the CUDA runtime, which dissect_telemetry does not link.
#include "dissect/telemetry/gpu_slot.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "dissect/common/cuda.h"
#include "dissect/telemetry/session.h"
#include "report.h"

namespace dissect::telemetry {
namespace {

// The GPU engine's NICs are not registered by the NIC itself: the first QP registers its NIC.
int device_for(Session& session, const std::string& name) {
  static std::mutex lock;
  static std::map<std::string, int> devices;
  std::lock_guard<std::mutex> guard(lock);
  auto found = devices.find(name);
  if (found != devices.end()) return found->second;
  const int id = session.register_device(DeviceInfo{name, "", "softnic", 1}, nullptr);
  devices.emplace(name, id);
  return id;
}

// One synchronous copy on a private non-blocking stream: it neither waits for nor is waited on by
// the engine kernel, which never finishes.
void copy_on_private_stream(int cuda_device, void* to, const void* from, size_t bytes,
                            cudaMemcpyKind kind) {
  int previous = 0;
  check_cuda(cudaGetDevice(&previous), "cudaGetDevice");
  check_cuda(cudaSetDevice(cuda_device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (status == cudaSuccess) status = cudaMemcpyAsync(to, from, bytes, kind, stream);
  if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
  if (stream != nullptr) cudaStreamDestroy(stream);
  cudaSetDevice(previous);
  check_cuda(status, "copy");
}

}  // namespace

void GpuQpSlot::open(nic::Nic& nic, const std::string& device_name, int cuda_device, int channel,
                     uint32_t qp_number, uint32_t sq_wqebbs) {
  Session* session = process_session();
  if (session == nullptr) return;
  const int device = device_for(*session, device_name);
  const QpTelemetry host = session->track_qp(device, channel >= 0 ? channel : 0, qp_number);
  if (host.counters == nullptr) return;
  try {
    const size_t bytes = sizeof(QpCounters) + size_t{sq_wqebbs} * sizeof(uint64_t);
    auto* block = static_cast<QpCounters*>(nic.allocate(bytes, nic::Placement::gpu));  // zeroed
    const QpCounters fresh = fresh_copy(*host.counters);
    try {
      copy_on_private_stream(cuda_device, block, &fresh, sizeof fresh, cudaMemcpyHostToDevice);
    } catch (...) {
      nic.release(block);
      throw;
    }
    nic_ = &nic;
    block_ = block;
    stamps_ = reinterpret_cast<uint64_t*>(block + 1);
    sample_mask_ = fresh.sample_mask;
    QpCounters* slot = host.counters;
    ticket_ = session->add_device_block([session, slot, block, cuda_device] {
      QpCounters copy;
      try {
        copy_on_private_stream(cuda_device, &copy, block, sizeof copy, cudaMemcpyDeviceToHost);
      } catch (const std::exception& error) {
        report("GPU counter block of QP " + std::to_string(slot->qp_number) +
               " not read back (" + error.what() + "); its traffic is missing from the counters");
        return;
      }
      session->merge_device_block(slot, copy);
    });
  } catch (const std::exception& error) {
    report("QP " + std::to_string(qp_number) + " on " + device_name +
           " gets no GPU counter block (" + error.what() + "); its traffic is not counted");
  }
}

GpuQpSlot::~GpuQpSlot() {
  if (block_ == nullptr) return;
  if (Session* session = process_session()) session->gather_device_block(ticket_);
  try {
    nic_->release(block_);
  } catch (const std::exception& error) {
    report(std::string("releasing a GPU counter block: ") + error.what());
  }
}

}  // namespace dissect::telemetry
