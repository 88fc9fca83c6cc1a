# cx7-ib with the engine's own CQE hop taken out of data_to_cqe_ns (cqe_transit_ns): the H200's
# `stamp to CQE seen` under fast, 0.77-0.83 us (nic-ceiling, 2026-12-03).
name = cx7-ib-transit
doorbell_to_data_ns = 2725
payload_read_ns = 610
data_to_cqe_ns = 575
message_rate_mps = 260
goodput_gbps = 24.8
packet_header_bytes = 42
mtu_bytes = 4096
qp_cache_entries = 12288
send_context_miss_ns = 9
receive_context_miss_ns = 198
receive_message_rate_mps = 440
dc_connect_ns = 450
cqe_transit_ns = 770
