// Route A: queues in GPU memory, created with DEVX commands (docs/mlx5_sources.md §4.2).
#include <cstdlib>
#include <cstring>

#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/gpu_memory.h"
#include "dissect/providers/mlx5/qp_attr.h"
#include "queue_pairs.h"

namespace dissect::mlx5provider {
namespace {

constexpr size_t kGpuPage = 64 * 1024;  // GPU page: umems and log_page_size are in its units
constexpr uint8_t kLogGpuPageRelative = 16 - MLX5_ADAPTER_PAGE_SHIFT;

uint8_t log2_exact(uint32_t v) { return ceil_log2(v); }

HcaCaps query_caps(Device& device) {
  QueryHcaCapOut general;
  QueryHcaCapOut atomic;
  const QueryHcaCapIn general_in = build_query_hca_cap_in(MLX5_CAP_GENERAL, HCA_CAP_OPMOD_GET_CUR);
  const QueryHcaCapIn atomic_in = build_query_hca_cap_in(MLX5_CAP_ATOMIC, HCA_CAP_OPMOD_GET_CUR);
  check_verbs_rc(mlx5dv_devx_general_cmd(device.context.get(), general_in.data(), general_in.bytes,
                                         general.data(), general.bytes),
                 "mlx5dv_devx_general_cmd(QUERY_HCA_CAP general)", device.name);
  check_verbs_rc(mlx5dv_devx_general_cmd(device.context.get(), atomic_in.data(), atomic_in.bytes,
                                         atomic.data(), atomic.bytes),
                 "mlx5dv_devx_general_cmd(QUERY_HCA_CAP atomic)", device.name);
  return parse_hca_caps(general, atomic);
}

// GPU memory owned with its DEVX umem registration.
struct GpuUmem {
  void* address = nullptr;
  UmemPtr umem;
  ~GpuUmem() {
    umem.reset();
    gpu_free(address);
  }
};

UmemPtr register_umem(Device& device, void* address, size_t bytes, bool gpu) {
#if defined(DISSECT_HAVE_MLX5DV_UMEM_DMABUF)
  // DMA-BUF first, then the legacy peermem path, as NVSHMEM and DOCA do.
  const int fd = gpu ? gpu_dmabuf_fd(address, bytes) : -1;
  if (fd >= 0) {
    mlx5dv_devx_umem_in in{};
    in.addr = nullptr;  // offset 0 into the dma-buf
    in.size = bytes;
    in.access = IBV_ACCESS_LOCAL_WRITE;
    in.pgsz_bitmap = ~uint64_t{0} & ~(uint64_t{4096} - 1);
    in.comp_mask = MLX5DV_UMEM_MASK_DMABUF;
    in.dmabuf_fd = fd;
    if (mlx5dv_devx_umem* umem = mlx5dv_devx_umem_reg_ex(device.context.get(), &in)) {
      return UmemPtr(umem);
    }
  }
#else
  (void)gpu;
#endif
  mlx5dv_devx_umem* umem =
      mlx5dv_devx_umem_reg(device.context.get(), address, bytes, IBV_ACCESS_LOCAL_WRITE);
  check_verbs(umem != nullptr, "mlx5dv_devx_umem_reg", device.name);
  return UmemPtr(umem);
}

void allocate_gpu_umem(Device& device, GpuUmem& out, size_t bytes, int fill) {
  out.address = gpu_allocate(bytes, kGpuPage);
  if (fill != 0) gpu_fill(out.address, fill, bytes);
  out.umem = register_umem(device, out.address, bytes, true);
}

uint32_t object_number(const PrmBuffer<cmd_out::bits>& out) {
  return static_cast<uint32_t>(get_field(out, cmd_out::object_number));
}

class DevxQueuePair : public nic::QueuePair {
 public:
  // `st`: MLX5_QPC_ST_RC, or MLX5_QPC_ST_DCI for a DC initiator (same queues, other QPC).
  DevxQueuePair(std::shared_ptr<Device> device, ibv_pd* pd, const nic::QpAttributes& a,
                uint8_t st)
      : device_(std::move(device)), max_inline_(a.max_inline), st_(st) {
    nic::check_queue_depth("sq_wqebbs", a.sq_wqebbs, mlx5::MLX5_MAX_SQ_WQEBBS);
    if (a.rq_wqes != 0) {
      throw VerbsError("create_qp(placement=gpu, rq_wqes>0): receive queues are host-only for now",
                       ENOTSUP, device_->name);
    }
    const HcaCaps caps = query_caps(*device_);
    if (const char* problem = gpu_queue_caps_problem(caps); *problem) {
      throw VerbsError(std::string("QUERY_HCA_CAP: ") + problem, ENOTSUP, device_->name);
    }
    pdn_ = query_pdn(pd);
    uar_.reset(mlx5dv_devx_alloc_uar(device_->context.get(), MLX5DV_UAR_ALLOC_TYPE_NC));
    check_verbs(uar_ != nullptr, "mlx5dv_devx_alloc_uar(NC)", device_->name);
    collapsed_ = a.send_cq_collapsed;  // CQ context cc = 1 (NVSHMEM's CQs)
    create_cq(a.cq_entries ? a.cq_entries : a.sq_wqebbs);
    create_qp(a.sq_wqebbs);
    expose();
  }
  ~DevxQueuePair() override {
    doorbell_.reset();
    qp_.reset();  // DEVX objects before the umems they point at
    cq_.reset();
    dbr_umem_.reset();
    host_unregister(dbr_page_);
    std::free(dbr_page_);
  }

  uint32_t qpn() const override { return qpn_; }
  nic::QpHandle handle() const override { return handle_; }
  nic::RecvQueueHandle recv_handle() const override { return nic::RecvQueueHandle{}; }
  nic::QpEndpoint endpoint() const override { return device_->local_endpoint(qpn_); }
  void connect(const nic::QpEndpoint& remote) override;
  // DCI: RESET->INIT->RTR->RTS with no remote (dc_commands.h).
  void activate_dci(const DciConnectParams& p);

 private:
  uint32_t query_pdn(ibv_pd* pd) {
    mlx5dv_pd dv_pd{};
    mlx5dv_obj obj{};
    obj.pd.in = pd;
    obj.pd.out = &dv_pd;
    check_verbs_rc(mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD), "mlx5dv_init_obj(PD)", device_->name);
    return dv_pd.pdn;
  }
  void create_cq(uint32_t entries);
  void create_qp(uint32_t wqebbs);
  void modify(const ModifyQpIn& in, const char* step);
  void expose();

  std::shared_ptr<Device> device_;
  uint32_t max_inline_;
  uint8_t st_;
  uint32_t pdn_ = 0;
  UarPtr uar_;
  GpuUmem cq_buffer_;  // CQEs followed by the CQ DBR on its own 64 B line
  uint32_t cqe_count_ = 0;
  bool collapsed_ = false;
  DevxObjPtr cq_;
  uint32_t cqn_ = 0;
  GpuUmem sq_buffer_;
  uint32_t wqebbs_ = 0;
  // The QP DBR lives in pinned host memory: the CPU-assisted forwarder must be able to write it,
  // and NVSHMEM's hostmem mode does the same (gda.md §4.5).
  void* dbr_page_ = nullptr;
  UmemPtr dbr_umem_;
  DevxObjPtr qp_;
  uint32_t qpn_ = 0;
  nic::SendQueueState* state_ = nullptr;  // in GPU memory, after the SQ
  std::unique_ptr<DoorbellRoute> doorbell_;
  nic::QpHandle handle_{};
};

void DevxQueuePair::create_cq(uint32_t entries) {
  nic::check_queue_depth("cq_entries", entries, 1u << 22);
  cqe_count_ = entries;
  const size_t cqe_bytes = size_t{entries} * sizeof(mlx5::mlx5_cqe64);
  // 0xff: op_own = invalid opcode with owner 1, so the first pass finds no CQE (gda.md §3.2).
  allocate_gpu_umem(*device_, cq_buffer_, cqe_bytes + 64, 0xff);
  gpu_fill(static_cast<uint8_t*>(cq_buffer_.address) + cqe_bytes, 0, 64);
  uint32_t eqn = 0;
  check_verbs_rc(mlx5dv_devx_query_eqn(device_->context.get(), 0, &eqn), "mlx5dv_devx_query_eqn",
                 device_->name);
  CreateCqParams p;
  p.log_cq_size = log2_exact(entries);
  p.uar_page = uar_->page_id;
  p.c_eqn = static_cast<uint8_t>(eqn);
  p.cq_umem_id = cq_buffer_.umem->umem_id;
  p.dbr_umem_id = cq_buffer_.umem->umem_id;
  p.dbr_offset = cqe_bytes;
  p.log_page_size = kLogGpuPageRelative;
  p.collapsed = collapsed_;
  const CreateCqIn in = build_create_cq_in(p);
  CreateCqOut out;
  cq_.reset(mlx5dv_devx_obj_create(device_->context.get(), in.data(), in.bytes, out.data(),
                                   out.bytes));
  check_verbs(cq_ != nullptr, "mlx5dv_devx_obj_create(CREATE_CQ)", device_->name);
  cqn_ = object_number(out);
}

void DevxQueuePair::create_qp(uint32_t wqebbs) {
  wqebbs_ = wqebbs;
  const size_t sq_bytes = size_t{wqebbs} * mlx5::MLX5_SEND_WQE_BB;
  allocate_gpu_umem(*device_, sq_buffer_, sq_bytes + sizeof(nic::SendQueueState), 0);
  state_ = reinterpret_cast<nic::SendQueueState*>(static_cast<uint8_t*>(sq_buffer_.address) + sq_bytes);
  check_verbs_rc(posix_memalign(&dbr_page_, 4096, 4096), "posix_memalign(QP DBR)", device_->name);
  std::memset(dbr_page_, 0, 4096);
  dbr_umem_ = register_umem(*device_, dbr_page_, 4096, false);
  CreateQpParams p;
  p.pd = pdn_;
  p.uar_page = uar_->page_id;
  p.log_sq_size = log2_exact(wqebbs);
  p.cqn_snd = cqn_;
  p.cqn_rcv = cqn_;
  p.log_page_size = kLogGpuPageRelative;
  p.wq_umem_id = sq_buffer_.umem->umem_id;
  p.dbr_umem_id = dbr_umem_->umem_id;
  p.dbr_offset = 0;
  const bool dci = st_ == MLX5_QPC_ST_DCI;
  const CreateQpIn in = dci ? build_create_dci_in(DciCreateParams{p, 0}) : build_create_qp_in(p);
  CreateQpOut out;
  qp_.reset(mlx5dv_devx_obj_create(device_->context.get(), in.data(), in.bytes, out.data(),
                                   out.bytes));
  const char* call =
      dci ? "mlx5dv_devx_obj_create(CREATE_QP st=DCI)" : "mlx5dv_devx_obj_create(CREATE_QP)";
  check_verbs(qp_ != nullptr, call, device_->name);
  qpn_ = object_number(out);
}

void DevxQueuePair::modify(const ModifyQpIn& in, const char* step) {
  ModifyQpOut out;
  check_verbs_rc(mlx5dv_devx_obj_modify(qp_.get(), in.data(), in.bytes, out.data(), out.bytes),
                 step, device_->name + " QP " + std::to_string(qpn_));
}

void DevxQueuePair::activate_dci(const DciConnectParams& p) {
  modify(build_rst2init_dci_in(qpn_, p), "mlx5dv_devx_obj_modify(RST2INIT_QP, DCI)");
  modify(build_init2rtr_dci_in(qpn_, p), "mlx5dv_devx_obj_modify(INIT2RTR_QP, DCI)");
  modify(build_rtr2rts_dci_in(qpn_, p), "mlx5dv_devx_obj_modify(RTR2RTS_QP, DCI)");
}

void DevxQueuePair::connect(const nic::QpEndpoint& remote) {
  if (st_ == MLX5_QPC_ST_DCI) {
    throw InvalidArgument(device_->name + " QP " + std::to_string(qpn_) +
                          " is a DCI: it has no peer to connect to (use Dci::activate)");
  }
  const RcConnectParams p = device_->connect_params(remote);
  uint8_t rmac[6] = {};
  uint16_t udp_sport = 0;
  if (p.link_layer == LinkLayer::ethernet) {
    // The kernel resolves the next hop's MAC for an address handle; read it back as NVSHMEM does.
    ibv_ah_attr ah_attr = rc_ah_attr(p);
    ibv_pd* pd = ibv_alloc_pd(device_->context.get());
    check_verbs(pd != nullptr, "ibv_alloc_pd", device_->name);
    PdPtr pd_owner(pd);
    AhPtr ah(ibv_create_ah(pd, &ah_attr));
    check_verbs(ah != nullptr, "ibv_create_ah", device_->name);
    mlx5dv_ah dv_ah{};
    mlx5dv_obj obj{};
    obj.ah.in = ah.get();
    obj.ah.out = &dv_ah;
    check_verbs_rc(mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH), "mlx5dv_init_obj(AH)", device_->name);
    std::memcpy(rmac, dv_ah.av->rmac, sizeof(rmac));
    udp_sport = be16toh(dv_ah.av->rlid);  // RoCE v2: rlid carries the UDP source port
  }
  modify(build_rst2init_qp_in(qpn_, p), "mlx5dv_devx_obj_modify(RST2INIT_QP)");
  modify(build_init2rtr_qp_in(qpn_, p, rmac, udp_sport), "mlx5dv_devx_obj_modify(INIT2RTR_QP)");
  modify(build_rtr2rts_qp_in(qpn_, p), "mlx5dv_devx_obj_modify(RTR2RTS_QP)");
}

void DevxQueuePair::expose() {
  auto* dbrec = static_cast<mlx5::be32*>(dbr_page_);
  doorbell_ = std::make_unique<DoorbellRoute>(device_, uar_->reg_addr, dbrec + mlx5::MLX5_SND_DBR);
  handle_.sq.buffer = static_cast<uint8_t*>(sq_buffer_.address);
  handle_.sq.wqebb_count = wqebbs_;
  handle_.qpn = qpn_;
  handle_.max_inline = max_inline_;
  handle_.dbrec_send = doorbell_->submitter_dbrec();
  handle_.doorbell = doorbell_->submitter_doorbell();
  handle_.state = state_;
  handle_.send_cq.cqes = static_cast<mlx5::mlx5_cqe64*>(cq_buffer_.address);
  handle_.send_cq.cqe_count = cqe_count_;
  handle_.send_cq.cqn = cqn_;
  handle_.send_cq.collapsed = collapsed_ ? 1 : 0;
  handle_.send_cq.dbrec = reinterpret_cast<mlx5::be32*>(
      static_cast<uint8_t*>(cq_buffer_.address) + size_t{cqe_count_} * sizeof(mlx5::mlx5_cqe64));
  nic::attach_telemetry(handle_, nullptr, nullptr, 0);
}

void require_cuda(const Device& device, const char* call) {
  if (!cuda_available()) {
    throw VerbsError(call, ENOTSUP,
                     device.name + ": GPU-resident queues need a CUDA build and a GPU");
  }
}

class DevxDci : public Dci {
 public:
  DevxDci(std::shared_ptr<Device> device, ibv_pd* pd, const nic::QpAttributes& a)
      : device_(device), qp_(std::move(device), pd, a, MLX5_QPC_ST_DCI) {}
  uint32_t qpn() const override { return qp_.qpn(); }
  nic::QpHandle handle() const override { return qp_.handle(); }
  void activate() override { qp_.activate_dci(device_->dci_params()); }
  mlx5::mlx5_wqe_av address_vector(const DcTarget& target) const override {
    return route_to(*device_, target);
  }

 private:
  std::shared_ptr<Device> device_;
  DevxQueuePair qp_;
};

}  // namespace

std::unique_ptr<nic::QueuePair> create_devx_qp(std::shared_ptr<Device> device, ibv_pd* pd,
                                               const nic::QpAttributes& attributes) {
  require_cuda(*device, "create_qp(placement=gpu)");
  return std::make_unique<DevxQueuePair>(std::move(device), pd, attributes, MLX5_QPC_ST_RC);
}

std::unique_ptr<Dci> create_devx_dci(std::shared_ptr<Device> device, ibv_pd* pd,
                                     const nic::QpAttributes& attributes) {
  require_cuda(*device, "create_dci");
  if (attributes.placement != nic::Placement::gpu) {
    throw InvalidArgument(device->name +
                          ": create_dci(placement=host): DCI queues are GPU-resident only "
                          "(DEVX umems in GPU memory, Route A)");
  }
  return std::make_unique<DevxDci>(std::move(device), pd, attributes);
}

}  // namespace dissect::mlx5provider
