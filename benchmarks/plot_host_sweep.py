#!/usr/bin/env python3
"""Plots bench_host_sweep's JSON (--json FILE): time and time / floor against n, one curve per
case (boundary, degree, value type, threads), log axes. Needs matplotlib (python3-matplotlib).

    /usr/bin/python3 benchmarks/plot_host_sweep.py sweep.json -o sweep.svg   # .svg, .png or .pdf

Several JSON files (e.g. one per dimension) may be given: their rows are plotted together, the
dimension then named in each curve's label. --floor2 plots the ratio to the 2-pass floor instead
of the d-pass one.
"""
import argparse
import json
import sys


def load_rows(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        if "rows" not in doc:
            raise SystemExit("plot_host_sweep: %s has no 'rows': not bench_host_sweep's JSON" % path)
        for r in doc["rows"]:
            r.setdefault("dim", doc.get("dim"))
            r["_bandwidth"] = doc.get("triad_bandwidth_gb_s")
            rows.append(r)
    if not rows:
        raise SystemExit("plot_host_sweep: no rows to plot")
    return rows


def curves(rows):
    """{label: [rows sorted by n]}, one curve per dimension × boundary × degree × type × threads."""
    dims = {r["dim"] for r in rows}
    out = {}
    for r in rows:
        label = "%s p=%d %s %dt" % (r["boundary"], r["degree"], r["type"], r["threads"])
        if len(dims) > 1:
            label = "%dD %s" % (r["dim"], label)
        out.setdefault(label, []).append(r)
    return {k: sorted(v, key=lambda r: r["n"]) for k, v in sorted(out.items())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", nargs="+", help="bench_host_sweep --json output(s)")
    ap.add_argument("-o", "--output", default="host_sweep.svg", help="image file (default host_sweep.svg)")
    ap.add_argument("--floor2", action="store_true", help="ratio to the 2-pass floor (default: the d-pass floor)")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_host_sweep: matplotlib is not installed (Debian: apt-get install python3-matplotlib, "
                 "or scripts/install-deps.sh); the JSON itself is readable as it is")

    rows = load_rows(args.json)
    key = "ratio2" if args.floor2 else "ratio"
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(12, 5))
    groups = curves(rows)
    colours = plt.get_cmap("tab10" if len(groups) <= 10 else "tab20")
    markers = {"float": "s", "double": "o", "complex<float>": "v", "complex<double>": "^"}
    for i, (label, rs) in enumerate(groups.items()):
        n = [r["n"] for r in rs]
        style = dict(marker=markers.get(rs[0]["type"], "x"), color=colours(i % colours.N),
                     ls="-" if rs[0]["boundary"] == "clamped" else "--", label=label)
        ax_t.plot(n, [r["median_s"] * 1e3 for r in rs], **style)
        ax_r.plot(n, [r[key] for r in rs], **style)
    ns = sorted({r["n"] for r in rows})
    ax_t.set(xscale="log", yscale="log", xlabel="n (1D size)", ylabel="median time [ms]", title="solve time")
    ax_r.set(xscale="log", yscale="log", xlabel="n (1D size)",
             ylabel="time / %s floor" % ("2-pass" if args.floor2 else "d-pass"),
             title="ratio to the memory floor (1 = at the floor)")
    ax_r.axhline(1.0, color="k", lw=0.8, ls="--")
    for ax in (ax_t, ax_r):
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xticks(ns)
        ax.set_xticklabels([str(v) for v in ns])
        ax.minorticks_off()
    ax_r.legend(fontsize="small")
    bws = sorted({r["_bandwidth"] for r in rows if r["_bandwidth"]})
    fig.suptitle(args.title or "kronex host solve sweep (triad bandwidth %s GB/s)"
                 % ", ".join("%.1f" % b for b in bws))
    fig.tight_layout()
    fig.savefig(args.output)
    print("plot_host_sweep: wrote %s (%d rows)" % (args.output, len(rows)))


if __name__ == "__main__":
    main()
