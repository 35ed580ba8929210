#!/usr/bin/env python3
"""Independent reader of the Kineto (PyTorch profiler) traces here (no iterscope code).

Sums the GPU kernels of each trace per name: complete events (`ph: "X"`) of category `kernel`
(PyTorch >= 1.9) or `Kernel` (PyTorch 1.8), `dur` in microseconds turned to integer nanoseconds
per event. Memcpy/memset events are not kernels and are left out, as `nsys stats` leaves them out
of its kernel summary. Writes `expected.json` beside it: per file, every kernel name with its
count and total ns, and the totals.

Usage: python3 read_kernels.py            (rewrites expected.json)
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL_CATEGORIES = ("kernel", "Kernel")


def read_trace(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    kernels = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in KERNEL_CATEGORIES:
            k = kernels.setdefault(e["name"], {"ns": 0, "count": 0})
            k["ns"] += round(float(e["dur"]) * 1000)
            k["count"] += 1
    return kernels


def main():
    out = {}
    for path in sorted(HERE.glob("*.json")):
        if path.name == "expected.json":
            continue
        kernels = read_trace(path)
        out[path.name] = {
            "kernel_ns": sum(k["ns"] for k in kernels.values()),
            "kernel_count": sum(k["count"] for k in kernels.values()),
            "kernels": [{"name": n, **k} for n, k in sorted(kernels.items(), key=lambda kv: (-kv[1]["ns"], kv[0]))],
        }
    (HERE / "expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
