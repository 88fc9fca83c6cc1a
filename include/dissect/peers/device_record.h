// A home in GPU global memory for a peer library's device-side record (DOCA's
// doca_gpu_dev_verbs_qp, NVSHMEM's nvshmemi_ibgda_device_qp_t and its CQ). The libraries' device
// code reads these records with __ldg (ld.global.nc) and updates their counters in place, so a
// kernel parameter or a local copy will not do: the record must sit in global memory.
//
// The memory is a module-static __device__ pool of this library, not cudaMalloc'ed: taking,
// filling and returning a record beside a running softnic engine allocates and frees nothing and
// synchronises only the caller's stream (softnic/gpu_engine.h, HAZARDS). Host control path only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace dissect::peers {

class DeviceRecord {
 public:
  static constexpr size_t MAX_BYTES = 1024;  // per record
  static constexpr uint32_t SLOTS = 64;      // records per device and process

  // A zero-filled record of `bytes` on `device`. Throws InvalidArgument naming the size when it is
  // over MAX_BYTES, std::runtime_error naming the device when its SLOTS records are all taken.
  DeviceRecord(int device, size_t bytes, cudaStream_t stream);
  ~DeviceRecord();
  DeviceRecord(const DeviceRecord&) = delete;
  DeviceRecord& operator=(const DeviceRecord&) = delete;
  DeviceRecord(DeviceRecord&& other) noexcept;
  DeviceRecord& operator=(DeviceRecord&&) = delete;

  void* get() const { return address_; }
  int device() const { return device_; }
  // Copies `bytes` (<= the record's size) in or out at `offset` on `stream`, and waits for it.
  void upload(const void* host, size_t bytes, cudaStream_t stream, size_t offset = 0) const;
  void download(void* host, size_t bytes, cudaStream_t stream, size_t offset = 0) const;

 private:
  int device_ = -1;
  uint32_t slot_ = SLOTS;  // SLOTS: moved from
  size_t bytes_ = 0;
  void* address_ = nullptr;
};

}  // namespace dissect::peers
