// nic::Nic and nic::ProtectionDomain for a ConnectX device.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "dissect/common/error.h"
#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/gpu_memory.h"
#include "queue_pairs.h"

namespace dissect::mlx5provider {
namespace {

bool is_gpu_pointer(void* address);

// nic::DcTarget over the provider's DCT (dc.h).
class Mlx5DcTarget : public nic::DcTarget {
 public:
  explicit Mlx5DcTarget(std::unique_ptr<Dct> dct) : dct_(std::move(dct)) {}
  uint32_t dctn() const override { return dct_->dct_number(); }
  nic::DctEndpoint endpoint() const override { return dct_endpoint(dct_->target()); }

 private:
  std::unique_ptr<Dct> dct_;
};

// nic::QueuePair over an activated DCI (dc.h): ready to post, no receive queue, no connect().
class Mlx5DciQueuePair : public nic::QueuePair {
 public:
  Mlx5DciQueuePair(std::shared_ptr<Device> device, std::unique_ptr<Dci> dci)
      : device_(std::move(device)), dci_(std::move(dci)) {}
  uint32_t qpn() const override { return dci_->qpn(); }
  nic::QpHandle handle() const override { return dci_->handle(); }
  nic::RecvQueueHandle recv_handle() const override { return nic::RecvQueueHandle{}; }
  nic::QpEndpoint endpoint() const override {
    nic::QpEndpoint e;
    e.qpn = dci_->qpn();
    e.lid = device_->port.lid;
    return e;
  }
  void connect(const nic::QpEndpoint&) override {
    throw InvalidArgument(device_->name + ": DCI " + hex(dci_->qpn()) +
                          ": connect: a DCI has no connection, each WQE names its DCT (gda::put_dc)");
  }

 private:
  std::shared_ptr<Device> device_;
  std::unique_ptr<Dci> dci_;
};

class Mlx5ProtectionDomain : public nic::ProtectionDomain {
 public:
  explicit Mlx5ProtectionDomain(std::shared_ptr<Device> device) : device_(std::move(device)) {
    pd_.reset(ibv_alloc_pd(device_->context.get()));
    check_verbs(pd_ != nullptr, "ibv_alloc_pd", device_->name);
  }

  nic::MemoryRegion register_memory(void* address, size_t length, uint32_t access) override {
    ibv_mr* mr = register_region(address, length, static_cast<int>(access));
    std::lock_guard<std::mutex> lock(mutex_);
    regions_[mr->lkey] = MrPtr(mr);
    return nic::MemoryRegion{address, length, mr->lkey, mr->rkey, access};
  }

  void deregister_memory(const nic::MemoryRegion& region) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (regions_.erase(region.lkey) == 0) {
      throw InvalidArgument(device_->name + ": lkey " + hex(region.lkey) + " is not registered here");
    }
  }

  std::unique_ptr<nic::QueuePair> create_qp(const nic::QpAttributes& attributes) override {
    if (attributes.send_cq != nullptr) {  // a CQ of another provider: this one makes none
      throw InvalidArgument(device_->name + ": create_qp: QpAttributes::send_cq is set, and the "
                            "mlx5 provider does not share CQs between QPs (Nic::create_cq)");
    }
    if (attributes.placement == nic::Placement::gpu) {
      return create_devx_qp(device_, pd_.get(), attributes);
    }
    return create_host_qp(device_, pd_.get(), attributes);
  }

  // DC behind the nic API (dc.h): over InfiniBand only, by name (RoCE AVs need the provider's).
  std::unique_ptr<nic::DcTarget> create_dct(const nic::DctAttributes& attributes) override {
    refuse_roce("create_dct");
    DctAttributes a;
    a.dc_access_key = attributes.dc_key;
    return std::make_unique<Mlx5DcTarget>(mlx5provider::create_dct(*this, a));
  }
  std::unique_ptr<nic::QueuePair> create_dci(const nic::QpAttributes& attributes) override {
    refuse_roce("create_dci");
    if (attributes.rq_wqes != 0 || attributes.send_cq != nullptr) {
      throw InvalidArgument(device_->name + ": create_dci: rq_wqes " + std::to_string(attributes.rq_wqes) +
                            (attributes.send_cq != nullptr ? " and a shared send CQ" : "") +
                            ": a DCI has no receive queue and its own CQ");
    }
    std::unique_ptr<Dci> dci = mlx5provider::create_dci(*this, attributes);
    dci->activate();
    return std::make_unique<Mlx5DciQueuePair>(device_, std::move(dci));
  }

  const std::shared_ptr<Device>& device() const { return device_; }
  ibv_pd* pd() const { return pd_.get(); }

 private:
  void refuse_roce(const char* call) const {
    if (device_->link_layer() == LinkLayer::ethernet) {
      throw InvalidArgument(device_->name + ": " + call + " through the nic API: RoCE DC address "
                            "vectors need the next hop's MAC (mlx5provider::Dci::address_vector, dc.h)");
    }
  }

  ibv_mr* register_region(void* address, size_t length, int access) {
    const std::string object = device_->name + " MR at " + hex(reinterpret_cast<uintptr_t>(address));
#if defined(DISSECT_HAVE_IBV_REG_DMABUF_MR)
    // GPU memory: DMA-BUF first (no peer-memory kernel module needed), then nvidia-peermem through
    // plain ibv_reg_mr. The iova is the GPU address, so WQEs keep using GPU virtual addresses.
    if (is_gpu_pointer(address)) {
      const int fd = gpu_dmabuf_fd(address, length);
      if (fd >= 0) {
        ibv_mr* mr = ibv_reg_dmabuf_mr(pd_.get(), 0, length, reinterpret_cast<uintptr_t>(address),
                                       fd, access);
        if (mr) return mr;
      }
    }
#endif
    ibv_mr* mr = ibv_reg_mr(pd_.get(), address, length, access);
    check_verbs(mr != nullptr, "ibv_reg_mr", object);
    return mr;
  }

  std::shared_ptr<Device> device_;
  PdPtr pd_;
  std::mutex mutex_;
  std::map<uint32_t, MrPtr> regions_;
};

class Mlx5Nic : public nic::Nic {
 public:
  explicit Mlx5Nic(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  std::string provider() const override { return "mlx5"; }
  std::unique_ptr<nic::ProtectionDomain> create_pd() override {
    return std::make_unique<Mlx5ProtectionDomain>(device_);
  }
  void* allocate(size_t bytes, nic::Placement placement) override {
    if (placement == nic::Placement::gpu) return gpu_allocate(bytes, 64 * 1024);
    void* p = nullptr;
    check_verbs_rc(posix_memalign(&p, 4096, bytes), "posix_memalign", device_->name);
    std::memset(p, 0, bytes);
    host_register_mapped(p, bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    host_blocks_[p] = bytes;
    return p;
  }
  void release(void* address) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = host_blocks_.find(address);
      if (it != host_blocks_.end()) {
        host_blocks_.erase(it);
        host_unregister(address);
        std::free(address);
        return;
      }
    }
    gpu_free(address);
  }

 private:
  std::shared_ptr<Device> device_;
  std::mutex mutex_;
  std::map<void*, size_t> host_blocks_;
};

bool is_gpu_pointer(void* address) {
  // Without CUDA no pointer is a GPU pointer; with CUDA, DMA-BUF export succeeds only for device
  // memory, which register_region tries first anyway.
  return cuda_available() && address != nullptr;
}

}  // namespace

PdParts mlx5_pd_parts(nic::ProtectionDomain& pd) {
  auto* mlx5_pd = dynamic_cast<Mlx5ProtectionDomain*>(&pd);
  if (mlx5_pd == nullptr) {
    throw InvalidArgument("DC objects need a protection domain of the mlx5 provider");
  }
  return PdParts{mlx5_pd->device(), mlx5_pd->pd()};
}

std::unique_ptr<nic::Nic> open_mlx5_nic(const Mlx5Options& options) {
  return std::make_unique<Mlx5Nic>(open_device(options));
}

}  // namespace dissect::mlx5provider
