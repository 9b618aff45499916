# gpu_table.py — Markdown tables of the GPU benchmark: dualbatch (device and host arrays) against
# the JAX and PyTorch peers, one table per workload, with the roofline fraction of dualbatch.
#
#   python3 bench/gpu_table.py FILE...
#
# Reads tab-separated lines from the C benchmark and the peers (bench/peers/*_peer.py):
#   ROW  <workload> <B> <tool> <access> <seconds_per_call> <points_per_s> <max_rel_diff>
#   ROOF <workload> <flops_per_point> <bytes_per_point> <roofline_points_per_s> <compute|memory>
#   LINK <workload> <in_bytes> <out_bytes> <h2d_bytes_per_s> <d2h_bytes_per_s> <points_per_s>
#   META <key> <value>
#   JIT  <cold|warm> <workload> <first_call_s> <second_call_s> <compiled|interpreted> [note]
# and ignores every other line.  A later ROW for the same (workload, B, tool, access) replaces an
# earlier one; a points/s field that is not a number ("oom", "error", "unsupported": dualbatch's
# grad rows while its GPU reverse mode is missing) is shown as such.  Workloads with a note in
# WORKLOAD_NOTES get it under their heading.  Exits nonzero when no ROW line was found.
import sys

DASH = "—"
# dualbatch's two GPU tiers side by side: "compiled" (tool dualbatch-compiled, first-order
# workloads) and "interpreter" (tool dualbatch); ratios, times and the roofline fraction are the
# compiled tier's where it ran, else the interpreter's.
COLUMNS = ["B", "compiled device (pts/s)", "interpreter device (pts/s)", "host arrays (pts/s)",
           "JAX (pts/s)", "PyTorch (pts/s)", "dualbatch / JAX", "dualbatch / PyTorch",
           "ms per call (dualbatch / JAX)", "roofline fraction", "max rel diff (JAX, PyTorch)"]
# What each tool computes where the heading alone does not say it.
WORKLOAD_NOTES = {
    "grad": "Gradient per point, n = 1024: dualbatch dual_run(DUAL_MODE_GRADIENT) with "
            "DUAL_AD_REVERSE; JAX jit(vmap(grad(f))); PyTorch vmap(torch.func.grad(f)). "
            "Max rel diff: each point's gradient against dualbatch's (from the CPU engine when "
            "the GPU rows say unsupported), scaled by its largest entry. "
            "Anchor (BENCHMARKS.md): JAX 3.97e7 points/s at B = 1e5.",
}


def number(s):
    try:
        return float(s)
    except ValueError:
        return None  # "oom", "error", "-"


def read(paths):
    rows, roofs, meta, jit = {}, {}, [], {}
    for path in paths:
        with open(path) as fh:
            for line in fh:
                f = line.rstrip("\n").split("\t")
                if f[0] == "ROW" and len(f) >= 8:
                    wl, b, tool, access, sec, pps, diff = f[1:8]
                    rows[wl, int(float(b)), tool, access] = (number(sec), pps, number(diff))
                elif f[0] == "ROOF" and len(f) >= 6:
                    roofs[f[1]] = f[2:6]
                elif f[0] == "LINK" and len(f) >= 7:
                    roofs[f[1] + "/link"] = f[2:7]
                elif f[0] == "META" and len(f) >= 3:
                    meta.append((f[1], "\t".join(f[2:])))
                elif f[0] == "JIT" and len(f) >= 6:  # JIT cold|warm wl first second tier [note]
                    jit[f[2], f[1]] = (number(f[3]), number(f[4]), f[5], f[6] if len(f) > 6 else "")
    return rows, roofs, meta, jit


def jit_table(jit, rows):
    """Cold compile and warm (disk cache) load per workload, and the batch from which AUTO's
    background compile pays for itself: T_compile / (1/r_interpreter - 1/r_compiled) points,
    at the rates of the largest batch measured on the device."""
    if not jit:
        return
    print("### compile and load times\n")
    print("First call of the first-order product (B = 1024, device arrays) under DUAL_TIER_COMPILE "
          "with an empty cache (cold: generate, NVRTC, load) and with the cache it filled (warm: "
          "disk load), minus the second call.\n")
    print("| workload | cold first call (s) | compile ≈ (s) | warm first call (s) | disk load ≈ (s) "
          "| tier | AUTO pays off after (points) |")
    print("|---|---|---|---|---|---|---|")
    for wl in dict.fromkeys(k[0] for k in jit):
        cold, warm = jit.get((wl, "cold")), jit.get((wl, "warm"))
        def cells(r):
            if r is None or r[0] is None or r[1] is None:
                return DASH, DASH
            return "%.3f" % r[0], "%.3f" % max(r[0] - r[1], 0.0)
        c1, c2 = cells(cold)
        w1, w2 = cells(warm)
        tier = cold[2] if cold else DASH
        if cold and cold[3]:
            tier += " (" + cold[3][:240] + ")"
        pays = DASH
        sizes = sorted(b for (w, b, t, a) in rows if w == wl and t == "dualbatch-compiled" and a == "device")
        if cold and cold[0] is not None and cold[1] is not None and sizes:
            b = sizes[-1]
            ri, rc = rows.get((wl, b, "dualbatch", "device")), rows.get((wl, b, "dualbatch-compiled", "device"))
            ri, rc = (number(ri[1]) if ri else None), (number(rc[1]) if rc else None)
            if ri and rc and rc > ri:
                pays = g3((cold[0] - cold[1]) / (1.0 / ri - 1.0 / rc))
        print("| %s | %s | %s | %s | %s | %s | %s |" % (wl, c1, c2, w1, w2, tier, pays))
    print()


def g3(v):
    """%.3g with a short exponent: 2.62e8, 9.5e5, 412."""
    m, _, e = ("%.3g" % v).partition("e")
    return m + ("e%d" % int(e) if e else "")


def batch(b):
    """1e6 for powers of ten, the plain integer otherwise."""
    e = len(str(b)) - 1
    return "1e%d" % e if b == 10 ** e and e >= 3 else str(b)


def table(wl, rows, roof, link=None):
    def get(b, tool, access="device"):
        return rows.get((wl, b, tool, access))

    def pps(r):  # the points/s cell: a number, or "oom"/"error" as the tool reported it
        if r is None:
            return DASH
        v = number(r[1])
        return g3(v) if v is not None else r[1]

    def rate(r):
        return None if r is None else number(r[1])

    def ratio(a, b):
        return g3(a / b) + "×" if a and b else DASH

    def ms(r):
        return g3(r[0] * 1e3) if r and r[0] is not None else DASH

    def diff(r):
        return "%.1e" % r[2] if r and r[2] is not None else DASH

    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for b in sorted({k[1] for k in rows if k[0] == wl}):
        comp, interp = get(b, "dualbatch-compiled"), get(b, "dualbatch")
        ours = comp if comp is not None else interp
        host = get(b, "dualbatch-compiled", "host") or get(b, "dualbatch", "host")
        jax, torch = get(b, "jax"), get(b, "pytorch")
        frac = DASH
        if roof and rate(ours) and number(roof[2]):
            frac = "%.1f%%" % (100 * rate(ours) / number(roof[2]))
        cells = [batch(b), pps(comp), pps(interp), pps(host), pps(jax), pps(torch),
                 ratio(rate(ours), rate(jax)), ratio(rate(ours), rate(torch)),
                 "%s / %s" % (ms(ours), ms(jax)), frac, "%s, %s" % (diff(jax), diff(torch))]
        print("| " + " | ".join(cells) + " |")
    print()
    others = sorted({(k[2], k[3]) for k in rows if k[0] == wl}
                    - {("dualbatch", "device"), ("dualbatch", "host"), ("jax", "device"),
                       ("pytorch", "device"), ("dualbatch-compiled", "device"),
                       ("dualbatch-compiled", "host")})
    for tool, access in others:  # e.g. pytorch-compile
        cells = ["B = %s: %s pts/s" % (batch(k[1]), pps(r)) for k, r in sorted(rows.items())
                 if k[0] == wl and k[2:] == (tool, access)]
        print("%s (%s): %s.  " % (tool, access, "; ".join(cells)))
    if roof:
        flops, nbytes, roof_pps, bound = roof
        print("Roofline: %s flop/point, %s bytes/point, %s bound: %s points/s."
              % (flops, nbytes, bound, g3(number(roof_pps) or 0)))
    else:
        print("Roofline: no ROOF line for %s." % wl)
    if link:
        in_b, out_b, _, _, link_pps = link
        host = [number(r[1]) for k, r in rows.items() if k[0] == wl and k[2:] == ("dualbatch", "host")]
        best = max([h for h in host if h], default=None)
        print("Host arrays move %s bytes in and %s bytes out per point over the link measured "
              "above: at most %s points/s%s."
              % (in_b, out_b, g3(number(link_pps) or 0),
                 "; the best host-array call reached %.0f%% of that" % (100 * best / number(link_pps))
                 if best and number(link_pps) else ""))
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: python3 bench/gpu_table.py FILE...")
    rows, roofs, meta, jit = read(sys.argv[1:])
    if not rows:
        sys.exit("gpu_table.py: no ROW lines in " + " ".join(sys.argv[1:]))
    for key, value in meta:
        print("- %s: %s" % (key, value))
    if meta:
        print()
    for wl in dict.fromkeys(k[0] for k in rows):  # workloads in order of first appearance
        print("### %s\n" % wl)
        if wl in WORKLOAD_NOTES:
            print(WORKLOAD_NOTES[wl] + "\n")
        table(wl, rows, roofs.get(wl), roofs.get(wl + "/link"))
    jit_table(jit, rows)


if __name__ == "__main__":
    main()
