// The table memory of a NIC without CUDA (table_memory.h): pageable host memory, written in place.
#include <cstdlib>
#include <cstring>
#include <string>

#include "dissect/common/atomic.h"
#include "dissect/common/error.h"
#include "table_memory.h"

namespace dissect::softnic {
namespace {

void* zeroed_pages(size_t bytes, const char* what) {
  const size_t rounded = (bytes + 4095) & ~size_t{4095};
  void* p = std::aligned_alloc(4096, rounded);
  if (p == nullptr) {
    throw Error(std::string("softnic: out of host memory allocating ") + std::to_string(bytes) +
                " B for " + what);
  }
  std::memset(p, 0, rounded);
  return p;
}

class HostTableMemory final : public TableMemory {
 public:
  ~HostTableMemory() override { std::free(tables_); }
  const char* name() const override { return "host memory"; }
  bool host_reachable() const override { return true; }
  bool gpu_reachable() const override { return false; }
  void* allocate_tables(size_t bytes) override { return tables_ = zeroed_pages(bytes, "its tables"); }
  void* allocate(size_t bytes, nic::Placement placement) override {
    if (placement != nic::Placement::host) {
      throw InvalidArgument(std::string("softnic on host memory: queue placement '") +
                            nic::to_string(placement) +
                            "' needs a CUDA device (SoftNicOptions::device) and the GPU engine");
    }
    return zeroed_pages(bytes, "an allocation");
  }
  void free(void* address, nic::Placement) override { std::free(address); }
  bool free_needs_engine_stopped() const override { return false; }
  void write(void* at, const void* from, size_t bytes) override { std::memcpy(at, from, bytes); }
  // The engine threads acquire the word, so everything stored before it is theirs to read.
  void publish(uint32_t* at, uint32_t value) override { store_release<Scope::system>(at, value); }
  bool in_host_memory(const void*) const override { return true; }
  void read(void* to, const void* at, size_t bytes) const override { read_words(to, at, bytes); }

 private:
  void* tables_ = nullptr;
};

}  // namespace

std::unique_ptr<TableMemory> host_table_memory() { return std::make_unique<HostTableMemory>(); }

}  // namespace dissect::softnic
