// The table memory of a NIC with a CUDA device (table_memory.h): mapped host memory for the
// host-thread engine, GPU memory for the engine kernel. GPU memory is written by copies on one
// private non-blocking stream, in order: a copy engine needs no SM, so the control path runs
// beside a persistent engine kernel, and each copy is visible once its synchronise returns.
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "ipc_arena.h"
#include "table_memory.h"

namespace dissect::softnic {
namespace {

class CudaTableMemory final : public TableMemory {
 public:
  CudaTableMemory(int device, bool tables_on_gpu, IpcArena* arena)
      : device_(device), tables_on_gpu_(tables_on_gpu), arena_(arena) {
    DeviceGuard guard(device_);
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), where("control stream"));
    stream_ = stream;
  }

  // The NIC has stopped its engine for good and released every allocation but the tables.
  ~CudaTableMemory() override {
    DeviceGuard guard(device_);
    if (arena_ != nullptr) {
      cudaFree(arena_->base());  // the tables were a block of it
    } else if (tables_on_gpu_) {
      cudaFree(tables_);
    } else {
      cudaFreeHost(tables_);
    }
    cudaStreamDestroy(stream_);
    cudaGetLastError();
  }

  const char* name() const override { return tables_on_gpu_ ? "GPU memory" : "mapped host memory"; }
  bool host_reachable() const override { return !tables_on_gpu_; }
  bool gpu_reachable() const override { return true; }

  void* allocate_tables(size_t bytes) override {
    tables_ = tables_on_gpu_ ? allocate(bytes, nic::Placement::gpu) : allocate(bytes, nic::Placement::host);
    return tables_;
  }

  void* allocate(size_t bytes, nic::Placement placement) override {
    DeviceGuard guard(device_);
    const size_t rounded = (bytes + 4095) & ~size_t{4095};
    void* p = nullptr;
    if (placement == nic::Placement::gpu) {
      if (arena_ != nullptr) {
        std::lock_guard<std::mutex> g(arena_lock_);
        p = arena_->take(rounded, "allocate (Placement::gpu)");
      } else {
        check_cuda(cudaMalloc(&p, rounded), where("cudaMalloc (Placement::gpu)"));
      }
      // Zero-filled by a copy (copy engine), not cudaMemset (a runtime kernel, which could be
      // launched for the first time behind a running engine); a reused arena block holds old bytes.
      const std::vector<uint8_t> zeros(rounded, 0);
      write(p, zeros.data(), rounded);
      return p;
    }
    check_cuda(cudaHostAlloc(&p, rounded, cudaHostAllocMapped | cudaHostAllocPortable),
               where("cudaHostAlloc (Placement::host, mapped)"));
    std::memset(p, 0, rounded);
    return p;
  }

  void free(void* address, nic::Placement placement) override {
    DeviceGuard guard(device_);
    if (arena_ != nullptr && arena_->owns(address)) {
      std::lock_guard<std::mutex> g(arena_lock_);
      arena_->give_back(address);
    } else if (placement == nic::Placement::gpu) {
      cudaFree(address);
    } else {
      cudaFreeHost(address);
    }
  }

  // cudaFree and cudaFreeHost may synchronise the device, which never returns behind the engine.
  bool free_needs_engine_stopped() const override { return true; }

  void write(void* at, const void* from, size_t bytes) override {
    if (!tables_on_gpu_ && !in_gpu_memory(at)) {
      std::memcpy(at, from, bytes);
      return;
    }
    copy(at, from, bytes, "control-path copy");
  }

  void publish(uint32_t* at, uint32_t value) override {
    if (!tables_on_gpu_) {
      store_release<Scope::system>(at, value);  // host engine threads acquire it
      return;
    }
    copy(at, &value, sizeof value, "control-path publish");  // after every earlier copy
  }

  bool in_host_memory(const void* address) const override {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, address) != cudaSuccess) cudaGetLastError();
    return a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged;
  }

  void read(void* to, const void* at, size_t bytes) const override {
    if (!tables_on_gpu_ && !in_gpu_memory(at)) {
      read_words(to, at, bytes);
      return;
    }
    const_cast<CudaTableMemory*>(this)->copy(to, at, bytes, "control-path read");
  }

 private:
  std::string where(const char* what) const {
    return "softnic on device " + std::to_string(device_) + ": " + what;
  }
  static bool in_gpu_memory(const void* p) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeDevice;
  }
  void copy(void* to, const void* from, size_t bytes, const char* what) {
    std::lock_guard<std::mutex> g(stream_lock_);
    DeviceGuard guard(device_);
    check_cuda(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream_), where(what));
    check_cuda(cudaStreamSynchronize(stream_), where(what));
  }

  int device_;
  bool tables_on_gpu_;
  IpcArena* arena_;  // owned by the NIC, which frees this memory first
  cudaStream_t stream_ = nullptr;
  void* tables_ = nullptr;
  std::mutex arena_lock_;
  std::mutex stream_lock_;
};

}  // namespace

std::unique_ptr<TableMemory> cuda_table_memory(const SoftNicOptions& options, IpcArena* arena) {
  return std::make_unique<CudaTableMemory>(options.device,
                                           options.engine == EngineKind::gpu_kernel, arena);
}

}  // namespace dissect::softnic
