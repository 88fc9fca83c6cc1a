#include "dissect/providers/ibverbs/endpoint.h"

#include <arpa/inet.h>

#include <cstring>

#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/verbs_raii.h"

namespace dissect::ibverbs {

using mlx5provider::check_verbs;
using mlx5provider::check_verbs_rc;
using mlx5provider::VerbsError;

struct Endpoint::Resources {
  std::string name;
  EndpointOptions options;
  mlx5provider::ContextPtr context;
  mlx5provider::PdPtr pd;
  mlx5provider::CqPtr cq;
  mlx5provider::QpPtr qp;
  ibv_port_attr port{};
  ibv_gid gid{};
  uint64_t next_id = 1;
  std::string object() const { return name + " QP " + std::to_string(qp ? qp->qp_num : 0); }
};

namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};

ibv_context* open_by_name(const std::string& wanted, std::string& name) {
  int count = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  check_verbs(list != nullptr, "ibv_get_device_list", "host");
  for (int i = 0; i < count; ++i) {
    const std::string candidate = ibv_get_device_name(list.get()[i]);
    if (!wanted.empty() && wanted != candidate) continue;
    name = candidate;
    ibv_context* context = ibv_open_device(list.get()[i]);
    check_verbs(context != nullptr, "ibv_open_device", name);
    return context;
  }
  throw VerbsError("ibv_open_device", ENODEV, wanted.empty() ? "no RDMA device" : wanted);
}

}  // namespace

Endpoint::Endpoint(const EndpointOptions& options) : r_(std::make_unique<Resources>()) {
  r_->options = options;
  r_->context.reset(open_by_name(options.device, r_->name));
  ibv_context* ctx = r_->context.get();
  check_verbs_rc(ibv_query_port(ctx, options.port_num, &r_->port), "ibv_query_port", r_->name);
  check_verbs_rc(ibv_query_gid(ctx, options.port_num, options.gid_index, &r_->gid),
                 "ibv_query_gid", r_->name);
  r_->pd.reset(ibv_alloc_pd(ctx));
  check_verbs(r_->pd != nullptr, "ibv_alloc_pd", r_->name);
  r_->cq.reset(ibv_create_cq(ctx, static_cast<int>(options.max_send_wr + options.max_recv_wr),
                             nullptr, nullptr, 0));
  check_verbs(r_->cq != nullptr, "ibv_create_cq", r_->name);
  ibv_qp_init_attr attr{};
  attr.send_cq = r_->cq.get();
  attr.recv_cq = r_->cq.get();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = options.max_send_wr;
  attr.cap.max_recv_wr = options.max_recv_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = options.max_inline;
  r_->qp.reset(ibv_create_qp(r_->pd.get(), &attr));
  check_verbs(r_->qp != nullptr, "ibv_create_qp", r_->name);
}

Endpoint::~Endpoint() = default;

const std::string& Endpoint::device_name() const { return r_->name; }

EndpointAddress Endpoint::address() const {
  EndpointAddress a;
  a.qpn = r_->qp->qp_num;
  a.lid = r_->port.lid;
  std::memcpy(a.gid, r_->gid.raw, sizeof(a.gid));
  return a;
}

void Endpoint::connect(const EndpointAddress& remote) {
  mlx5provider::RcConnectParams p;
  p.port_num = r_->options.port_num;
  p.path_mtu = static_cast<uint8_t>(r_->port.active_mtu);
  p.remote_qpn = remote.qpn;
  p.remote_lid = remote.lid;
  std::memcpy(p.remote_gid, remote.gid, sizeof(p.remote_gid));
  p.sgid_index = r_->options.gid_index;
  const bool ethernet = r_->port.link_layer == IBV_LINK_LAYER_ETHERNET;
  p.link_layer = ethernet ? mlx5provider::LinkLayer::ethernet : mlx5provider::LinkLayer::infiniband;
  p.use_grh = (r_->port.flags & IBV_QPF_GRH_REQUIRED) != 0;
  p.hop_limit = ethernet ? 64 : 1;
  for (mlx5provider::QpTransition t : {mlx5provider::rc_reset_to_init(p),
                                       mlx5provider::rc_init_to_rtr(p),
                                       mlx5provider::rc_rtr_to_rts(p)}) {
    check_verbs_rc(ibv_modify_qp(r_->qp.get(), &t.attr, t.mask), "ibv_modify_qp", r_->object());
  }
}

ibv_mr* Endpoint::register_memory(void* address, size_t length, int access) {
  ibv_mr* mr = ibv_reg_mr(r_->pd.get(), address, length, access);
  check_verbs(mr != nullptr, "ibv_reg_mr", r_->name);
  return mr;
}

void Endpoint::deregister_memory(ibv_mr* mr) {
  check_verbs_rc(ibv_dereg_mr(mr), "ibv_dereg_mr", r_->name);
}

void build_write_chain(const std::vector<RdmaWrite>& writes, uint64_t first_id,
                       std::vector<ibv_send_wr>& wrs, std::vector<ibv_sge>& sges) {
  wrs.assign(writes.size(), ibv_send_wr{});
  sges.assign(writes.size(), ibv_sge{});
  for (size_t i = 0; i < writes.size(); ++i) {
    const RdmaWrite& w = writes[i];
    sges[i] = ibv_sge{w.local_address, w.length, w.lkey};
    ibv_send_wr& wr = wrs[i];
    wr.wr_id = first_id + i;
    wr.sg_list = &sges[i];
    wr.num_sge = 1;
    wr.opcode = w.with_immediate ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    if (w.with_immediate) wr.imm_data = htonl(w.immediate);
    wr.wr.rdma.remote_addr = w.remote_address;
    wr.wr.rdma.rkey = w.rkey;
    wr.next = i + 1 < writes.size() ? &wrs[i + 1] : nullptr;
  }
  // RC completes in order: one CQE for the last write retires every earlier one.
  if (!wrs.empty()) wrs.back().send_flags = IBV_SEND_SIGNALED;
}

uint64_t Endpoint::post_write_chain(const std::vector<RdmaWrite>& writes) {
  if (writes.empty()) return 0;
  std::vector<ibv_send_wr> wrs;
  std::vector<ibv_sge> sges;
  build_write_chain(writes, r_->next_id, wrs, sges);
  r_->next_id += writes.size();
  ibv_send_wr* bad = nullptr;
  check_verbs_rc(ibv_post_send(r_->qp.get(), wrs.data(), &bad), "ibv_post_send", r_->object());
  return wrs.back().wr_id;
}

std::vector<uint64_t> Endpoint::poll(int max) {
  std::vector<ibv_wc> wcs(static_cast<size_t>(max));
  const int n = ibv_poll_cq(r_->cq.get(), max, wcs.data());
  check_verbs(n >= 0, "ibv_poll_cq", r_->object());
  std::vector<uint64_t> done;
  for (int i = 0; i < n; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) {
      throw VerbsError(std::string("completion wr_id ") + std::to_string(wcs[i].wr_id) + ": " +
                           ibv_wc_status_str(wcs[i].status),
                       EIO, r_->object());
    }
    done.push_back(wcs[i].wr_id);
  }
  return done;
}

}  // namespace dissect::ibverbs
