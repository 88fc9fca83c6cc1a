#!/usr/bin/env python3
"""Fails when an #include runs from a lower layer of DESIGN.md to a higher one.

A file's layer is its folder: include/dissect/<layer>/..., src/<layer>/..., bench/... (the top).
Tests are not checked: they sit above everything they test. No edge is exempt: the last ones (the
NIC models registering with telemetry) go through the nic layer's observer now (nic/observer.h).

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
    errors = []
    for path, line, source, target in edges(root):
        if source is None or source == target:
            continue
        for layer in (source, target):
            if layer not in RANKS:
                errors.append(f"{path}:{line}: layer '{layer}' has no rank in check_layers.py")
        if source not in RANKS or target not in RANKS or RANKS[target] <= RANKS[source]:
            continue
        errors.append(f"{path}:{line}: {source} (rank {RANKS[source]}) includes {target} "
                      f"(rank {RANKS[target]}), a higher layer")
    for e in errors:
        print(f"error: {e}")
    print(f"{len(errors)} layering error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
