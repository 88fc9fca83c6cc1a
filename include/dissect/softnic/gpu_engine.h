// The softnic's GPU engine (SoftNic with EngineKind::gpu_kernel, softnic.h): what a program that
// runs kernels beside it must respect, and the CUDA runtime helpers it uses for that.
//
// HAZARDS (measured on the lent H200; DESIGN.md "Where the softnic engine runs"):
//  - NEVER call cudaDeviceSynchronize() (or anything that synchronises the whole device: the legacy
//    default stream with blocking streams, cudaFree / cudaFreeHost of memory, cudaDeviceReset)
//    while an engine kernel runs: it never returns. Launch your kernels on your own
//    cudaStreamNonBlocking stream and wait with cudaStreamSynchronize / events. The library itself
//    never does. release() and QP destruction stop the engine around the free and restart it.
//  - Modules must be loaded eagerly, or the first launch of a never-launched kernel deadlocks
//    behind the running engine. The library sets CUDA_MODULE_LOADING=EAGER before the process's
//    first CUDA call (a static initialiser and gpu_runtime_init()), and force-loads its own kernels
//    with cudaFuncGetAttributes before starting an engine. If your program touches CUDA before the
//    library does, set CUDA_MODULE_LOADING=EAGER yourself or call preload_kernel() on each of your
//    kernels before start().
//  - Per-context resources a kernel needs at its first launch (local memory, the printf FIFO) are
//    set up before the engine starts: start() launches a probe kernel using both and waits for it.
//    Measured on the H200 without it: a kernel with a local array and gda's timeout printf never
//    started while the engine ran, a kernel with neither did. With the probe, the GPU tier's
//    submitter kernels (local arrays, gda's timeout printf) launch beside a running engine on the
//    H200 (docs/results/h200/engine/ctest_gpu.log).
//  - Local memory is reserved before the engine starts (SoftNicOptions::local_memory_reserve,
//    through cudaDeviceSetLimit(cudaLimitStackSize)): a kernel needing more per-thread local memory
//    than reserved would make the driver wait for an idle device, i.e. forever. Do not lower the
//    stack limit or launch kernels with larger frames while an engine runs.
//  - A fault inside the engine is never a silent hang: the engine writes a status block (current
//    QP, consumer index, last syndrome, heartbeat) into mapped host memory, and a host watchdog
//    prints it when the heartbeat stalls or the engine kernel fails; stop() gives up after a
//    timeout with that status in its exception.
#pragma once

#include <cstddef>

#include "dissect/softnic/softnic.h"

namespace dissect::softnic {

// Sets CUDA_MODULE_LOADING=EAGER (unless already EAGER) and initialises the runtime. Returns the
// device count; 0 (and no exception) when there is no usable CUDA device, or no CUDA in this build.
int gpu_runtime_init();
// Loads a kernel's module now (cudaFuncGetAttributes), so launching it later cannot deadlock
// behind a running engine, and checks its local frame fits the reserved stack size. Throws naming
// `what` on failure.
void preload_kernel(const void* kernel, const char* what);
// Grows the per-thread local memory reservation (cudaLimitStackSize) to at least `bytes`. Call it
// before any engine on the device starts, then preload_kernel() the kernels that need it.
void reserve_local_memory(size_t bytes);
// Enables peer access both ways between two devices; false when they cannot reach each other.
bool enable_peer_access(int a, int b);
// Throws dissect::Error naming `what` when `status` (a cudaError_t) is not success.
void check_cuda(int status, const char* what);

}  // namespace dissect::softnic
