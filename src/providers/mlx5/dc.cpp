// DC on the mlx5 provider (dc.h): the DCT through DEVX CREATE_DCT over verbs CQ/SRQ/PD numbers
// (the UCX route), the DCI through devx_qp.cpp, and the address vectors a DCI puts in its WQEs.
#include <cstring>
#include <type_traits>

#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/qp_attr.h"
#include "queue_pairs.h"

namespace dissect::mlx5provider {

DciConnectParams Device::dci_params() const {
  DciConnectParams p;
  p.port_num = options.port_num;
  p.link_layer = link_layer();
  p.path_mtu = static_cast<uint8_t>(port.active_mtu);
  return p;
}

DcTarget Device::local_dc_target(uint32_t dctn, uint64_t dc_key) const {
  DcTarget t;
  t.dct_number = dctn;
  t.dc_key = dc_key;
  t.link_layer = link_layer();
  t.lid = port.lid;
  std::memcpy(t.gid, gid.raw, sizeof(t.gid));
  return t;
}

namespace {

// The next hop's MAC and the RoCE v2 UDP source port, as the kernel resolves them for an AH.
void resolve_ethernet_route(const Device& device, DcTarget& t) {
  RcConnectParams p;
  p.port_num = device.options.port_num;
  p.link_layer = LinkLayer::ethernet;
  std::memcpy(p.remote_gid, t.gid, sizeof(p.remote_gid));
  p.sgid_index = t.sgid_index;
  p.hop_limit = t.hop_limit;
  p.traffic_class = t.traffic_class;
  p.flow_label = t.flow_label;
  p.sl = t.sl;
  ibv_ah_attr ah_attr = rc_ah_attr(p);
  PdPtr pd(ibv_alloc_pd(device.context.get()));
  check_verbs(pd != nullptr, "ibv_alloc_pd", device.name);
  AhPtr ah(ibv_create_ah(pd.get(), &ah_attr));
  check_verbs(ah != nullptr, "ibv_create_ah(DC target)", device.name);
  mlx5dv_ah dv_ah{};
  mlx5dv_obj obj{};
  obj.ah.in = ah.get();
  obj.ah.out = &dv_ah;
  check_verbs_rc(mlx5dv_init_obj(&obj, MLX5DV_OBJ_AH), "mlx5dv_init_obj(AH)", device.name);
  std::memcpy(t.rmac, dv_ah.av->rmac, sizeof(t.rmac));
  t.udp_sport = be16toh(dv_ah.av->rlid);
  t.flow_label = 0;  // the port above already folds it in
}

}  // namespace

mlx5::mlx5_wqe_av route_to(const Device& device, const DcTarget& target) {
  if (target.link_layer != device.link_layer()) {
    throw InvalidArgument(device.name + ": DC target " + std::to_string(target.dct_number) +
                          " is on another link layer than this port");
  }
  DcTarget t = target;
  t.sgid_index = device.options.gid_index;
  // The same GRH policy as the RC path (Device::connect_params).
  t.use_grh = (device.port.flags & IBV_QPF_GRH_REQUIRED) != 0;
  t.hop_limit = t.link_layer == LinkLayer::ethernet ? 64 : 1;
  if (t.link_layer == LinkLayer::ethernet) resolve_ethernet_route(device, t);
  return build_full_av(t);
}

namespace {

template <typename Out, typename In>
void init_dv(In* in, Out* out, uint64_t type, const std::string& object) {
  mlx5dv_obj obj{};
  if constexpr (std::is_same_v<In, ibv_pd>) {
    obj.pd.in = in;
    obj.pd.out = out;
  } else if constexpr (std::is_same_v<In, ibv_cq>) {
    obj.cq.in = in;
    obj.cq.out = out;
  } else {
    obj.srq.in = in;
    obj.srq.out = out;
  }
  check_verbs_rc(mlx5dv_init_obj(&obj, type), "mlx5dv_init_obj", object);
}

class Mlx5Dct : public Dct {
 public:
  Mlx5Dct(PdParts parts, const DctAttributes& a)
      : device_(std::move(parts.device)), key_(a.dc_access_key) {
    nic::check_queue_depth("DCT cq_entries", a.cq_entries, 1u << 22);
    nic::check_queue_depth("DCT srq_wqes", a.srq_wqes, 1u << 15);
    cq_.reset(ibv_create_cq(device_->context.get(), static_cast<int>(a.cq_entries), nullptr,
                            nullptr, 0));
    check_verbs(cq_ != nullptr, "ibv_create_cq(DCT)", device_->name);
    ibv_srq_init_attr srq_attr{};
    srq_attr.attr.max_wr = a.srq_wqes;
    srq_attr.attr.max_sge = 1;
    srq_.reset(ibv_create_srq(parts.pd, &srq_attr));
    check_verbs(srq_ != nullptr, "ibv_create_srq(DCT)", device_->name);
    create(parts.pd, a);
  }
  uint32_t dct_number() const override { return dctn_; }
  DcTarget target() const override { return device_->local_dc_target(dctn_, key_); }

 private:
  void create(ibv_pd* pd, const DctAttributes& a) {
    mlx5dv_pd dv_pd{};
    mlx5dv_cq dv_cq{};
    mlx5dv_srq dv_srq{};
    dv_srq.comp_mask = MLX5DV_SRQ_MASK_SRQN;
    init_dv(pd, &dv_pd, MLX5DV_OBJ_PD, device_->name + " PD");
    init_dv(cq_.get(), &dv_cq, MLX5DV_OBJ_CQ, device_->name + " DCT CQ");
    init_dv(srq_.get(), &dv_srq, MLX5DV_OBJ_SRQ, device_->name + " DCT SRQ");
    CreateDctParams p;
    p.pd = dv_pd.pdn;
    p.cqn = dv_cq.cqn;
    p.srqn = dv_srq.srqn;
    p.dc_access_key = a.dc_access_key;
    p.port = device_->options.port_num;
    p.mtu = static_cast<uint8_t>(device_->port.active_mtu);
    p.access = a.access;  // nic::ACCESS_* share the IBV_ACCESS_* values, as RC_ACCESS_* do
    p.my_addr_index = device_->options.gid_index;
    p.hop_limit = device_->link_layer() == LinkLayer::ethernet ? 64 : 1;
    const CreateDctIn in = build_create_dct_in(p);
    CreateDctOut out;
    dct_.reset(mlx5dv_devx_obj_create(device_->context.get(), in.data(), in.bytes, out.data(),
                                      out.bytes));
    check_verbs(dct_ != nullptr, "mlx5dv_devx_obj_create(CREATE_DCT)", device_->name);
    dctn_ = static_cast<uint32_t>(get_field(out, cmd_out::object_number));
  }

  std::shared_ptr<Device> device_;
  uint64_t key_;
  CqPtr cq_;
  SrqPtr srq_;
  DevxObjPtr dct_;  // declared last: destroyed (drained by the kernel) before the SRQ and CQ
  uint32_t dctn_ = 0;
};

}  // namespace

std::unique_ptr<Dct> create_dct(nic::ProtectionDomain& pd, const DctAttributes& attributes) {
  return std::make_unique<Mlx5Dct>(mlx5_pd_parts(pd), attributes);
}

std::unique_ptr<Dci> create_dci(nic::ProtectionDomain& pd, const nic::QpAttributes& attributes) {
  PdParts parts = mlx5_pd_parts(pd);
  return create_devx_dci(std::move(parts.device), parts.pd, attributes);
}

}  // namespace dissect::mlx5provider
