// Private: the engine strategy of one SoftNic (softnic.h): what runs the engine over its tables.
//
//   host_runner  HostEngine's threads (engine/host_engine.h), a status block in host memory
//   gpu_runner   the persistent engine kernel (engine/gpu_kernel.h) on its own non-blocking
//                stream, a status block in mapped host memory and a watchdog thread
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dissect/softnic/softnic.h"
#include "table_memory.h"

namespace dissect::softnic {

class EngineRunner {
 public:
  virtual ~EngineRunner() = default;
  // Starts the engine over `tables` as launch `generation`.
  virtual void start(NicTables* tables, uint32_t generation) = 0;
  // Returns once the engine has finished the window it was executing; throws after `timeout_ns`
  // with the status (a kernel that did not exit stays running).
  virtual void stop(uint64_t timeout_ns) = 0;
  // One engine pass until no QP has work, with the engine stopped (GPU engine only).
  virtual void drain(NicTables* tables, uint32_t generation, uint64_t timeout_ns) = 0;
  // Whether the engine may still run (a GPU kernel that did not exit within stop's timeout).
  virtual bool active() const = 0;
  virtual bool faulted() const = 0;
  virtual EngineStatus status() const = 0;
};

// One line for error messages: what the status block says of NIC `nic_id`'s engine.
std::string describe_engine_status(const EngineStatus& s, uint32_t nic_id, const SoftNicOptions& options);

std::unique_ptr<EngineRunner> host_runner(uint32_t threads);
// CUDA builds (gpu_runner.cu); without CUDA it throws naming the options. `memory` writes the
// kernel's stop flag (GPU memory, on the tables' stream) and outlives the runner.
std::unique_ptr<EngineRunner> gpu_runner(const SoftNicOptions& options, uint32_t nic_id,
                                         TableMemory& memory);

}  // namespace dissect::softnic
