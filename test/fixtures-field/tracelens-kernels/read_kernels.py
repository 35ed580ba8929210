#!/usr/bin/env python3
"""Independent reader of TraceLens `ops_unique_args.csv` kernel tables (no iterscope code).

Each row of such a table is one (op, arguments) group of a real profile; its
`kernel_details_summary` lists the kernels launched directly by that op with their count and
total duration in microseconds (a Python literal with `np.float64(...)` around the numbers).
This script sums those per kernel name over all rows and writes `expected.json` beside it:
per file, every kernel name with its total (us) and count, the TraceLens op categories it was
seen under, and the totals. Names starting with `Memcpy ` / `Memset ` are copies, not kernels
(iterscope keeps them out of kernel time, as `nsys stats` does); they are listed apart.

Self-checks (exit 1 on failure): per row, the kernels' durations add up to the row's own
`total_direct_kernel_time_sum` (within rounding), and the rows' `Percentage (%)` add up to 100.

Usage: python3 read_kernels.py            (rewrites expected.json)
"""
import ast
import csv
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NP_FLOAT = re.compile(r"np\.float64\(([^()]*)\)")


def row_kernels(row):
    return ast.literal_eval(NP_FLOAT.sub(r"\1", row["kernel_details_summary"]))


def read_table(path):
    csv.field_size_limit(1 << 24)
    kernels, copies, problems = {}, {}, []
    percent = 0.0
    with open(path, newline="", encoding="utf-8") as f:
        for i, row in enumerate(csv.DictReader(f)):
            details = row_kernels(row)
            direct = sum(k["total_duration_us"] for k in details)
            stated = float(row["total_direct_kernel_time_sum"])
            if abs(direct - stated) > 0.001 * max(1, k_count(details)) + 1e-6 * stated:
                problems.append(f"row {i + 2}: kernels sum to {direct}, row says {stated}")
            percent += float(row["Percentage (%)"])
            for k in details:
                into = copies if k["name"].startswith(("Memcpy ", "Memset ")) else kernels
                e = into.setdefault(k["name"], {"us": 0.0, "count": 0, "tracelens_op_categories": []})
                e["us"] += k["total_duration_us"]
                e["count"] += k["count"]
                if row["op category"] not in e["tracelens_op_categories"]:
                    e["tracelens_op_categories"].append(row["op category"])
    if abs(percent - 100) > 1e-6:
        problems.append(f"percentages add up to {percent}")
    return kernels, copies, problems


def k_count(details):
    return sum(k["count"] for k in details)


def main():
    out, failed = {}, False
    for path in sorted(HERE.glob("*.ops_unique_args.csv")):
        kernels, copies, problems = read_table(path)
        for p in problems:
            print(f"{path.name}: {p}", file=sys.stderr)
        failed |= bool(problems)
        out[path.name] = {
            "kernel_us": round(sum(k["us"] for k in kernels.values()), 6),
            "kernel_count": sum(k["count"] for k in kernels.values()),
            "copy_us": round(sum(k["us"] for k in copies.values()), 6),
            "kernels": [{"name": n, "us": round(k["us"], 6), **{x: k[x] for x in ("count", "tracelens_op_categories")}}
                        for n, k in sorted(kernels.items(), key=lambda kv: (-kv[1]["us"], kv[0]))],
            "copies": [{"name": n, "us": round(k["us"], 6), "count": k["count"]} for n, k in sorted(copies.items())],
        }
    (HERE / "expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
