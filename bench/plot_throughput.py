# plot_throughput.py — throughput-versus-batch plots (PNG, log-log) of the GPU benchmarks: one
# figure per workload, points/s against the batch size B for every tool of the raw files
# (dualbatch's compiled tier and interpreter with device and host arrays, JAX, PyTorch), with the
# workload's roofline as a dashed line when the file has a ROOF line.
#
#   python3 bench/plot_throughput.py --out DIR [--title TEXT] FILE...
#
# Reads the tab-separated ROW and ROOF lines that bench/gpu_table.py reads (bench_gpu,
# bench_sgrad, bench_hvp and the peers print them):
#   ROW  <workload> <B> <tool> <access> <seconds_per_call> <points_per_s> ...
#   ROOF <workload> <flops_per_point> <bytes_per_point> <roofline_points_per_s> <bound>
# and writes DIR/<workload>.png.  A later ROW for the same (workload, B, tool, access) replaces an
# earlier one; rows whose rate is not a number (oom, error) are left out.  Needs matplotlib; the
# bench scripts skip the plots with a message when it is missing.
import argparse
import os
import sys

LABELS = {  # (tool, access) -> legend text; other tools keep their own name
    ("dualbatch-compiled", "device"): "dualbatch compiled, device arrays",
    ("dualbatch", "device"): "dualbatch interpreter, device arrays",
    ("dualbatch-compiled", "host"): "dualbatch compiled, host arrays",
    ("dualbatch", "host"): "dualbatch interpreter, host arrays",
    ("jax", "device"): "JAX",
    ("pytorch", "device"): "PyTorch",
    ("dualbatch-compiled-for", "device"): "dualbatch compiled, forward-over-reverse forced",
    ("dualbatch-for", "device"): "dualbatch interpreter, forward-over-reverse forced",
    ("jax-aux", "device"): "JAX, value and Hessian together",
    ("pytorch-aux", "device"): "PyTorch, value and Hessian together",
}


def read_rows(paths):
    rows, roofs = {}, {}
    for path in paths:
        with open(path) as f:
            for line in f:
                field = line.rstrip("\n").split("\t")
                if field[0] == "ROW" and len(field) >= 7:
                    try:
                        batch, rate = float(field[2]), float(field[6])
                    except ValueError:
                        continue
                    rows[(field[1], field[3], field[4], batch)] = rate
                elif field[0] == "ROOF" and len(field) >= 5:
                    roofs[field[1]] = float(field[4])
    return rows, roofs


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_throughput.py: matplotlib is missing (pip install matplotlib): no plots", file=sys.stderr)
        return 0
    rows, roofs = read_rows(args.files)
    if not rows:
        print("plot_throughput.py: no ROW lines in " + " ".join(args.files), file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for workload in sorted({k[0] for k in rows}):
        series = {}
        for (wl, tool, access, batch), rate in rows.items():
            if wl == workload:
                series.setdefault((tool, access), []).append((batch, rate))
        fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
        for (tool, access), points in sorted(series.items()):
            points.sort()
            label = LABELS.get((tool, access), tool if access == "device" else f"{tool}, {access} arrays")
            dashed = tool.startswith("dualbatch") and access == "host"
            ax.plot([b for b, _ in points], [r for _, r in points], "o--" if dashed else "o-", label=label)
        if workload in roofs:
            ax.axhline(roofs[workload], color="grey", linestyle=":", label="roofline (device arrays)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("batch size B (points per call)")
        ax.set_ylabel("points per second")
        ax.set_title(f"{workload}{': ' + args.title if args.title else ''}", fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(args.out, f"{workload}.png")
        fig.savefig(path)
        plt.close(fig)
        print(f"plot_throughput.py: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
