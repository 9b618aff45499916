# plot_dispatch.py — the adaptive-dispatch plot of BENCHMARKS.md (issue 20): time per call against
# the batch size B, log-log, one panel per workload, a line per context (CPU, GPU, AUTO) from the
# CSV files bench_dispatch writes (--csv), the points where AUTO split the call marked.
#
#   python3 bench/plot_dispatch.py --out FILE.png [--title TEXT] CSV...
#
# A CSV row: workload,B,context,seconds,points_per_second,ran_on.  A later row for the same
# (workload, B, context) replaces an earlier one.  Needs matplotlib.
import argparse
import csv
import sys

STYLE = {"cpu": ("CPU context (all threads)", "o-"), "gpu": ("GPU context", "s-"),
         "auto": ("AUTO context", "^--")}


def read(paths):
    rows = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                try:
                    rows[(r["workload"], int(r["B"]), r["context"])] = (float(r["seconds"]), r["ran_on"])
                except (KeyError, ValueError):
                    continue
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_dispatch.py: matplotlib is missing (pip install matplotlib); no plot", file=sys.stderr)
        return 2
    rows = read(a.csv)
    workloads = sorted({k[0] for k in rows}, key=lambda w: ["ba", "kin", "hess"].index(w) if w in ("ba", "kin", "hess") else 9)
    if not workloads:
        print("plot_dispatch.py: no rows", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(workloads), figsize=(5.2 * len(workloads), 4.2), squeeze=False)
    for ax, w in zip(axes[0], workloads):
        for ctx, (label, style) in STYLE.items():
            pts = sorted((B, t, on) for (wk, B, c), (t, on) in rows.items() if wk == w and c == ctx)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label, markersize=4)
            split = [(B, t) for B, t, on in pts if "split" in on or "+" in on]
            if split:
                ax.plot([p[0] for p in split], [p[1] for p in split], "k*", markersize=9,
                        label="AUTO split the points" if ctx == "auto" else None)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("points per call B")
        ax.set_ylabel("seconds per call (host arrays)")
        ax.set_title(w)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("plot_dispatch.py: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
