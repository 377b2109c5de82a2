#!/usr/bin/env python3
"""Draws a kronex bench JSON file: median time and GDOF/s against problem size, one line per
backend (called by `kronex bench --plot OUT`; usable alone: kronex-plot.py bench.json out.svg).
The output format follows OUT's extension (svg, png, pdf). Written to a temporary name and
renamed, so a failure never leaves a partial file."""
import json
import os
import sys


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: kronex-plot.py BENCH.json OUT.svg\n")
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(argv[1]) as f:
        data = json.load(f)
    rows = data["rows"]
    fig, (ax_t, ax_g) = plt.subplots(1, 2, figsize=(10, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, backend in enumerate(sorted({r["backend"] for r in rows})):
        color = colors[i % len(colors)]
        mine = sorted((r for r in rows if r["backend"] == backend), key=lambda r: r["unknowns"])
        x = [r["unknowns"] for r in mine]
        ax_t.errorbar(x, [r["time_s"]["median"] * 1e3 for r in mine],
                      yerr=[[(r["time_s"]["median"] - r["time_s"]["min"]) * 1e3 for r in mine],
                            [(r["time_s"]["max"] - r["time_s"]["median"]) * 1e3 for r in mine]],
                      marker="o", capsize=3, color=color, label=backend)
        ax_t.plot(x, [r["floor_s"] * 1e3 for r in mine], linestyle="--", color=color, label=backend + " memory floor")
        ax_g.plot(x, [r["gdof_per_s"] for r in mine], marker="o", color=color, label=backend)
    for ax in (ax_t, ax_g):
        ax.set_xscale("log")
        ax.set_xlabel("unknowns")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    ax_t.set_yscale("log")
    ax_t.set_ylabel("time per run [ms] (median, min-max)")
    ax_g.set_ylabel("GDOF/s")
    # '$' would start matplotlib's math mode ($n in swept programs).
    program = " ".join(data.get("program", "").split()).replace("$", r"\$")
    fig.suptitle(program if len(program) < 110 else program[:107] + "...", fontsize=9)
    fig.tight_layout()
    out = argv[2]
    ext = os.path.splitext(out)[1].lstrip(".") or "svg"
    tmp = out + ".tmp-%d.%s" % (os.getpid(), ext)
    try:
        fig.savefig(tmp, format=ext)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
