#include "dissect/peers/device_record.h"

#include <bitset>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"

namespace dissect::peers {
namespace {

// One pool per device (each device's context has its own copy of a module's __device__ data).
__device__ __align__(256) unsigned char record_pool[DeviceRecord::SLOTS][DeviceRecord::MAX_BYTES];

std::mutex pool_lock;
std::map<int, std::bitset<DeviceRecord::SLOTS>> taken;  // device -> slots in use

}  // namespace

DeviceRecord::DeviceRecord(int device, size_t bytes, cudaStream_t stream)
    : device_(device), bytes_(bytes) {
  if (bytes == 0 || bytes > MAX_BYTES) {
    throw InvalidArgument("peer device record of " + std::to_string(bytes) +
                          " bytes: must be in [1, " + std::to_string(MAX_BYTES) + "]");
  }
  {
    std::lock_guard<std::mutex> guard(pool_lock);
    auto& used = taken[device];
    for (uint32_t s = 0; s < SLOTS && slot_ == SLOTS; ++s) {
      if (!used[s]) used[s] = true, slot_ = s;
    }
  }
  if (slot_ == SLOTS) {
    throw std::runtime_error("peer device records on device " + std::to_string(device) +
                             ": all " + std::to_string(SLOTS) + " are taken");
  }
  DeviceGuard on_device(device);
  void* base = nullptr;
  check_cuda(cudaGetSymbolAddress(&base, record_pool), "peer record pool address");
  address_ = static_cast<unsigned char*>(base) + size_t{slot_} * MAX_BYTES;
  // A copy, not cudaMemsetAsync (a kernel): nothing new launches beside a running engine.
  static const unsigned char zeros[MAX_BYTES] = {};
  check_cuda(cudaMemcpyAsync(address_, zeros, bytes_, cudaMemcpyHostToDevice, stream), "zero peer record");
  check_cuda(cudaStreamSynchronize(stream), "zero peer record");
}

DeviceRecord::DeviceRecord(DeviceRecord&& other) noexcept
    : device_(other.device_), slot_(other.slot_), bytes_(other.bytes_), address_(other.address_) {
  other.slot_ = SLOTS;
  other.address_ = nullptr;
}

DeviceRecord::~DeviceRecord() {
  if (slot_ == SLOTS) return;
  std::lock_guard<std::mutex> guard(pool_lock);
  taken[device_][slot_] = false;
}

void DeviceRecord::upload(const void* host, size_t bytes, cudaStream_t stream, size_t offset) const {
  if (offset + bytes > bytes_) {
    throw InvalidArgument("peer record upload of " + std::to_string(bytes) + " bytes at " +
                          std::to_string(offset) + " overruns the record's " +
                          std::to_string(bytes_));
  }
  DeviceGuard on_device(device_);
  check_cuda(cudaMemcpyAsync(static_cast<unsigned char*>(address_) + offset, host, bytes,
                             cudaMemcpyHostToDevice, stream), "peer record upload");
  check_cuda(cudaStreamSynchronize(stream), "peer record upload");
}

void DeviceRecord::download(void* host, size_t bytes, cudaStream_t stream, size_t offset) const {
  if (offset + bytes > bytes_) {
    throw InvalidArgument("peer record download of " + std::to_string(bytes) + " bytes at " +
                          std::to_string(offset) + " overruns the record's " +
                          std::to_string(bytes_));
  }
  DeviceGuard on_device(device_);
  check_cuda(cudaMemcpyAsync(host, static_cast<const unsigned char*>(address_) + offset, bytes,
                             cudaMemcpyDeviceToHost, stream), "peer record download");
  check_cuda(cudaStreamSynchronize(stream), "peer record download");
}

}  // namespace dissect::peers
