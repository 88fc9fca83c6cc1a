#!/usr/bin/env python3
"""Fails when an #include runs from a lower layer of DESIGN.md to a higher one.

A file's layer is its folder: include/dissect/<layer>/..., src/<layer>/..., bench/... (the top).
Tests are not checked: they sit above everything they test. An edge that runs up and cannot be
fixed yet is listed in ALLOWED below, with the reason; the check prints every allowed edge it
still finds, and fails on an allowed edge that no longer exists, so the list can only shrink.

usage: check_layers.py [repository root]
"""
import os
import re
import sys

# Bottom up; a layer may include its own and lower ranks. Where DESIGN.md has no place:
#   doctor     the machine facts (sysfs, the PCIe tree, the CUDA probe) below everything that
#              picks a device by them (bootstrap, the mlx5 provider); it includes no other layer.
#   providers  the NIC providers (mlx5, ibverbs) beside the softnic, the software provider.
RANKS = {
    "common": 0,
    "doctor": 1,
    "mlx5": 2,
    "nic": 3,
    "softnic": 4,
    "providers": 4,
    "gda": 5,
    "proxy": 6,
    "peers": 7,
    "telemetry": 8,
    "bootstrap": 9,
    "bench": 10,
    "clients": 10,
    "moe": 10,  # the MoE dispatch/combine client (DESIGN.md layer 9, bench and clients)
}

# (file, included layer): why it still runs up. The per-QP counter block and the hardware-counter
# interface are in the nic layer now (nic/qp_counters.h, nic/hw_counters.h); what is left of issue
# 12, item 1 is to have the telemetry session register the NIC models and their QPs instead of the
# models calling up into it.
ALLOWED = {
    ("src/softnic/queue_pair.cpp", "telemetry"): "registers its QPs with the session (issue 12.1)",
    ("src/softnic/softnic.cpp", "telemetry"): "registers the NIC with the session (issue 12.1)",
    ("src/softnic/gpu_engine.cu", "telemetry"): "GPU-resident counter slots (issue 12.1)",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"dissect/([a-z0-9_]+)/', re.MULTILINE)
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh")


def layer_of(path):
    parts = path.split("/")
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "dissect":
        return parts[2]
    if parts[0] == "src" and len(parts) > 1:
        return parts[1]
    if parts[0] in ("bench", "examples"):
        return "bench"
    return None


def edges(root):
    for top in ("include", "src", "bench", "examples"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    line = text.count("\n", 0, match.start()) + 1
                    yield path, line, layer_of(path), match.group(1)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors, allowed_seen = [], set()
    for path, line, source, target in edges(root):
        if source is None or source == target:
            continue
        for layer in (source, target):
            if layer not in RANKS:
                errors.append(f"{path}:{line}: layer '{layer}' has no rank in check_layers.py")
        if source not in RANKS or target not in RANKS or RANKS[target] <= RANKS[source]:
            continue
        if (path, target) in ALLOWED:
            allowed_seen.add((path, target))
            continue
        errors.append(f"{path}:{line}: {source} (rank {RANKS[source]}) includes {target} "
                      f"(rank {RANKS[target]}), a higher layer")
    for path, target in sorted(ALLOWED):
        if (path, target) in allowed_seen:
            print(f"allowed, to be removed: {path} -> {target}: {ALLOWED[(path, target)]}")
        else:
            errors.append(f"{path} -> {target} is allowed but no longer exists: "
                          "remove it from ALLOWED")
    for e in errors:
        print(f"error: {e}")
    print(f"{len(errors)} layering error(s), {len(allowed_seen)} allowed upward edge(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
