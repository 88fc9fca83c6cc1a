// GpuQpSlot (gpu_slot.h): the GPU softnic's QPs counted in GPU memory for the NICs' observer.
#include "gpu_slot.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>

#include "dissect/common/cuda.h"

namespace dissect::softnic {
namespace {

using telemetry::QpCounters;

// One stderr line, as telemetry reports: a slot that cannot be made or read back is not fatal.
void report(const std::string& message) {
  std::fprintf(stderr, "dissect telemetry: %s\n", message.c_str());
}

// The GPU engine's NICs are not opened to the observer by the NIC itself: the first QP opens its NIC.
int device_for(nic::Observer& observer, const std::string& name) {
  static std::mutex lock;
  static std::map<std::string, int> devices;
  std::lock_guard<std::mutex> guard(lock);
  auto found = devices.find(name);
  if (found != devices.end()) return found->second;
  const int id = observer.open_device(nic::DeviceDescription{name, "", "softnic", 1}, nullptr);
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
  nic::Observer* observer = nic::observer();
  if (observer == nullptr) return;
  const int device = device_for(*observer, device_name);
  QpCounters* const host = observer->track_qp(device, channel >= 0 ? channel : 0, qp_number);
  if (host == nullptr) return;
  try {
    const size_t bytes = sizeof(QpCounters) + size_t{sq_wqebbs} * sizeof(uint64_t);
    auto* block = static_cast<QpCounters*>(nic.allocate(bytes, nic::Placement::gpu));  // zeroed
    const QpCounters fresh = telemetry::fresh_copy(*host);
    try {
      copy_on_private_stream(cuda_device, block, &fresh, sizeof fresh, cudaMemcpyHostToDevice);
    } catch (...) {
      nic.release(block);
      throw;
    }
    nic_ = &nic;
    observer_ = observer;
    block_ = block;
    stamps_ = reinterpret_cast<uint64_t*>(block + 1);
    sample_mask_ = fresh.sample_mask;
    ticket_ = observer->add_device_block([observer, slot = host, block, cuda_device] {
      QpCounters copy;
      try {
        copy_on_private_stream(cuda_device, &copy, block, sizeof copy, cudaMemcpyDeviceToHost);
      } catch (const std::exception& error) {
        report("GPU counter block of QP " + std::to_string(slot->qp_number) +
               " not read back (" + error.what() + "); its traffic is missing from the counters");
        return;
      }
      observer->merge_device_block(slot, copy);
    });
  } catch (const std::exception& error) {
    report("QP " + std::to_string(qp_number) + " on " + device_name +
           " gets no GPU counter block (" + error.what() + "); its traffic is not counted");
  }
}

GpuQpSlot::~GpuQpSlot() {
  if (block_ == nullptr) return;
  observer_->gather_device_block(ticket_);
  try {
    nic_->release(block_);
  } catch (const std::exception& error) {
    report(std::string("releasing a GPU counter block: ") + error.what());
  }
}

}  // namespace dissect::softnic
