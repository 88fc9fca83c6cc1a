// Route B: verbs-created queues in host memory, exposed through mlx5dv_init_obj.
#include <cstring>

#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/gpu_memory.h"
#include "dissect/providers/mlx5/qp_attr.h"
#include "queue_pairs.h"

namespace dissect::mlx5provider {

void connect_verbs_qp(ibv_qp* qp, const RcConnectParams& params, const std::string& object) {
  for (QpTransition t : {rc_reset_to_init(params), rc_init_to_rtr(params), rc_rtr_to_rts(params)}) {
    check_verbs_rc(ibv_modify_qp(qp, &t.attr, t.mask), "ibv_modify_qp", object);
  }
}

namespace {

CqPtr create_cq(Device& device, uint32_t entries) {
  ibv_cq_init_attr_ex attr{};
  attr.cqe = entries;
  attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
  // The GPU poller never updates the CQ consumer index, so the CQ must not check it.
  attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
  ibv_cq_ex* cq = ibv_create_cq_ex(device.context.get(), &attr);
  check_verbs(cq != nullptr, "ibv_create_cq_ex(IGNORE_OVERRUN)", device.name);
  return CqPtr(ibv_cq_ex_to_cq(cq));
}

QpPtr create_qp(Device& device, ibv_pd* pd, ibv_cq* cq, const nic::QpAttributes& a) {
  ibv_qp_init_attr_ex attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.cap.max_send_wr = a.sq_wqebbs;
  attr.cap.max_recv_wr = a.rq_wqes;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = a.max_inline;
  attr.sq_sig_all = 0;  // with signal-all the kernel would also turn on requester scatter-to-CQE
  attr.comp_mask = IBV_QP_INIT_ATTR_PD;
  attr.pd = pd;
  mlx5dv_qp_init_attr dv{};
  dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
  dv.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE;
  ibv_qp* qp = mlx5dv_create_qp(device.context.get(), &attr, &dv);
  check_verbs(qp != nullptr, "mlx5dv_create_qp(DISABLE_SCATTER_TO_CQE)", device.name);
  return QpPtr(qp);
}

class HostQueuePair : public nic::QueuePair {
 public:
  HostQueuePair(std::shared_ptr<Device> device, ibv_pd* pd, const nic::QpAttributes& a)
      : device_(std::move(device)), max_inline_(a.max_inline) {
    if (a.send_cq_collapsed) {
      // Verbs has no collapsed CQ (cc = 1 is a DevX CREATE_CQ field): GPU-resident queues have it.
      throw VerbsError("create_qp(placement=host, send_cq_collapsed): a collapsed send CQ needs "
                       "DevX queues (placement=gpu)", ENOTSUP, device_->name);
    }
    const uint32_t cq_entries = a.cq_entries ? a.cq_entries : a.sq_wqebbs;
    cq_ = create_cq(*device_, cq_entries + a.rq_wqes);
    qp_ = create_qp(*device_, pd, cq_.get(), a);
    object_ = device_->name + " QP " + std::to_string(qp_->qp_num);
    expose();
  }
  ~HostQueuePair() override {
    doorbell_.reset();
    host_unregister(dv_qp_.sq.buf);
    host_unregister(dv_cq_.buf);
    host_unregister(state_);
    std::free(state_);
  }

  uint32_t qpn() const override { return qp_->qp_num; }
  nic::QpHandle handle() const override { return handle_; }
  nic::RecvQueueHandle recv_handle() const override { return nic::RecvQueueHandle{}; }
  nic::QpEndpoint endpoint() const override { return device_->local_endpoint(qpn()); }
  void connect(const nic::QpEndpoint& remote) override {
    connect_verbs_qp(qp_.get(), device_->connect_params(remote), object_);
  }

 private:
  void expose() {
    mlx5dv_obj obj{};
    obj.qp.in = qp_.get();
    obj.qp.out = &dv_qp_;
    obj.cq.in = cq_.get();
    obj.cq.out = &dv_cq_;
    check_verbs_rc(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ), "mlx5dv_init_obj", object_);
    if (dv_cq_.cqe_size != sizeof(mlx5::mlx5_cqe64)) {
      throw VerbsError("mlx5dv_init_obj: CQE size " + std::to_string(dv_cq_.cqe_size) +
                           " (unset MLX5_CQE_SIZE)", EINVAL, object_);
    }
    void* state = nullptr;
    check_verbs_rc(posix_memalign(&state, 64, sizeof(nic::SendQueueState)), "posix_memalign",
                   object_);
    std::memset(state, 0, sizeof(nic::SendQueueState));
    state_ = static_cast<nic::SendQueueState*>(state);
    auto* dbrec = reinterpret_cast<mlx5::be32*>(dv_qp_.dbrec);
    doorbell_ = std::make_unique<DoorbellRoute>(device_, dv_qp_.bf.reg, dbrec + mlx5::MLX5_SND_DBR);
    // The submitter's pointers: the GPU's view of each host buffer (identity without CUDA).
    handle_.sq.buffer = static_cast<uint8_t*>(
        host_register_mapped(dv_qp_.sq.buf, size_t{dv_qp_.sq.wqe_cnt} * dv_qp_.sq.stride));
    handle_.sq.wqebb_count = dv_qp_.sq.wqe_cnt;
    handle_.qpn = qp_->qp_num;
    handle_.max_inline = max_inline_;
    handle_.dbrec_send = doorbell_->submitter_dbrec();
    handle_.doorbell = doorbell_->submitter_doorbell();
    handle_.state = static_cast<nic::SendQueueState*>(host_register_mapped(state_, sizeof(*state_)));
    handle_.send_cq.cqes = static_cast<mlx5::mlx5_cqe64*>(
        host_register_mapped(dv_cq_.buf, size_t{dv_cq_.cqe_cnt} * dv_cq_.cqe_size));
    handle_.send_cq.cqe_count = dv_cq_.cqe_cnt;
    handle_.send_cq.cqn = dv_cq_.cqn;
    handle_.send_cq.dbrec = reinterpret_cast<mlx5::be32*>(dv_cq_.dbrec);
    nic::attach_telemetry(handle_, nullptr, nullptr, 0);
  }

  std::shared_ptr<Device> device_;
  uint32_t max_inline_;
  CqPtr cq_;
  QpPtr qp_;
  std::string object_;
  mlx5dv_qp dv_qp_{};
  mlx5dv_cq dv_cq_{};
  nic::SendQueueState* state_ = nullptr;
  std::unique_ptr<DoorbellRoute> doorbell_;
  nic::QpHandle handle_{};
};

}  // namespace

std::unique_ptr<nic::QueuePair> create_host_qp(std::shared_ptr<Device> device, ibv_pd* pd,
                                               const nic::QpAttributes& attributes) {
  return std::make_unique<HostQueuePair>(std::move(device), pd, attributes);
}

}  // namespace dissect::mlx5provider
