"""Plots of a strata convergence log (run.log = FILE.h5), as PNG files.

    python -m strata_mc.plot LOG.h5 [-o PREFIX] [--comp N]
    python -m strata_mc.plot --vs-n LOG.h5... -o PREFIX
    (or scripts/strata-plot, the same)

writes
    PREFIX-estimate.png  each iteration's estimate with its error bar, the
                         weighted average with its band, the exact value
    PREFIX-error.png     relative error against the evaluations spent, with
                         an N^-1/2 guide through the first kept iteration
    PREFIX-map.png       the map's increment density per axis, a panel for
                         every map snapshot in the log
With --vs-n, several logs of one integrand at different neval (plain, qmc,
vegas...) give PREFIX-vs-n.png: the rms true error of single iterations (and
the rms reported sigma, dashed) against the points per iteration, one line
per point set, with N^-1/2 and N^-1 guides (bench/qmc_convergence.sh).
A vector integrand's run gets a panel per component in the estimate and
error plots, of the first 8 where there are more (--comp N: component N
only).  PREFIX defaults to LOG without
.h5.  Reads the log with strata_mc.log (h5py, numpy) and draws with
matplotlib.  The log may be read while the run writes it.  Its layout is
described in doc/file-formats.md.
"""
import argparse
import sys

import numpy as np

from .errors import StrataError
from .log import read_log
from .result import MAX_COV_COMP


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed on a cluster node
    import matplotlib.pyplot as plt
    return plt


def title(log):
    a = log.attrs
    ranks = int(a.get("ranks", 1))
    return "%s, d=%d, %s, %d rank%s" % (a.get("integrand", "?"), int(a.get("dim", 0)),
                                       a.get("mode", "?"), ranks, "" if ranks == 1 else "s")


def series(log, c):
    """Component c's columns as the scalar table has them."""
    it = log.table
    if log.ncomp == 1:
        return {k: it[k] for k in it.dtype.names}
    row = log.comp[:, c, :]
    n = len(row)
    return {"itn": it["itn"][:n], "kept": it["kept"][:n], "neval": it["neval"][:n],
            "integral": row[:, 0], "sigma": row[:, 1],
            "average": row[:, 2], "average_sigma": row[:, 3]}


def label(log, c):
    return title(log) + ("" if log.ncomp == 1 else ": component %d of %d" % (c, log.ncomp))


def draw_estimate(ax, log, it, c):
    kept = it["kept"] != 0
    n = it["itn"]
    ax.errorbar(n[~kept], it["integral"][~kept], yerr=it["sigma"][~kept], fmt="o", ms=3,
                color="0.6", capsize=2, label="warm-up / not averaged")
    ax.errorbar(n[kept], it["integral"][kept], yerr=it["sigma"][kept], fmt="o", ms=3,
                color="C0", capsize=2, label="averaged")
    if kept.any():
        avg, sig = it["average"][kept][-1], it["average_sigma"][kept][-1]
        ax.axhline(avg, color="C1", lw=1, label="weighted average")
        ax.axhspan(avg - sig, avg + sig, color="C1", alpha=0.25)
        # Warm-up iterations can be far off: frame the averaged ones.
        lo = np.min(it["integral"][kept] - 3 * it["sigma"][kept])
        hi = np.max(it["integral"][kept] + 3 * it["sigma"][kept])
        pad = 0.1 * (hi - lo) if hi > lo else abs(avg) * 1e-3 + 1e-300
        ax.set_ylim(lo - pad, hi + pad)
    # The log's exact value is component 0's.
    exact = log.exact if c == 0 else None
    if exact is not None:
        ax.axhline(exact, color="k", ls="--", lw=1, label="exact")
    ax.set_ylabel("estimate")
    ax.set_title(label(log, c), fontsize=10)
    ax.legend(fontsize=8)


def draw_error(ax, log, it, c):
    evals = np.cumsum(it["neval"].astype(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_it = it["sigma"] / np.abs(it["integral"])
        rel_avg = it["average_sigma"] / np.abs(it["average"])
    ok = np.isfinite(rel_it) & (rel_it > 0)
    ax.loglog(evals[ok], rel_it[ok], "o", ms=3, color="0.5", label="each iteration")
    kept = (it["kept"] != 0) & np.isfinite(rel_avg) & (rel_avg > 0)
    if kept.any():
        ax.loglog(evals[kept], rel_avg[kept], "o-", ms=3, color="C0",
                  label="weighted average")
        x0, y0 = evals[kept][0], rel_avg[kept][0]
        x = np.array([x0, evals[-1]])
        ax.loglog(x, y0 * np.sqrt(x0 / x), "--", color="k", lw=1, label=r"$\propto N^{-1/2}$")
    ax.set_ylabel("relative error")
    ax.set_title(label(log, c), fontsize=10)
    ax.legend(fontsize=8)


def plot_components(log, comps, draw, xlabel, out):
    """One panel per component of comps."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(comps), 1, figsize=(7, 1.2 + 3.3 * len(comps)),
                             squeeze=False, sharex=True)
    axes = [a[0] for a in axes]
    for ax, c in zip(axes, comps):
        draw(ax, log, series(log, c), c)
    axes[-1].set_xlabel(xlabel)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_maps(log, out):
    """A panel per map snapshot: each axis's sample density after that
    iteration."""
    k = len(log.maps)
    if k == 0:
        return False
    plt = _pyplot()
    cols = min(k, 3)
    rows = (k + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 1.0 + 3.2 * rows),
                             squeeze=False, sharey=True)
    for j in range(rows * cols):
        ax = axes[j // cols][j % cols]
        if j >= k:
            ax.axis("off")
            continue
        edges = log.maps[j]          # [axes][ninc + 1], unit coordinates
        ninc = edges.shape[1] - 1
        for a, e in enumerate(edges):
            # Samples are spread evenly over increments: density = 1/(ninc * width).
            density = 1.0 / (ninc * np.diff(e))
            ax.step(e, np.append(density, density[-1]), where="post", lw=1,
                    label="axis %d" % (a + 1) if len(edges) <= 10 else None)
        ax.set_yscale("log")
        ax.set_title("after iteration %d" % int(log.map_itn[j]), fontsize=9)
        if j % cols == 0:
            ax.set_ylabel("sample density of the map")
        if j // cols == rows - 1:
            ax.set_xlabel("u (unit coordinate of the axis)")
        if j == 0 and len(edges) <= 10:
            ax.legend(fontsize=7, ncol=2)
    fig.suptitle("%s: the map, %d snapshot%s" % (title(log), k, "" if k == 1 else "s"))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def point_set(log):
    """mode, and for QMC the rule, from the job definition the log keeps."""
    keys = log.definition
    mode = keys.get("vegas.mode", "?")
    if "vegas.qmc" in keys:
        mode += " " + keys["vegas.qmc"] + (" (qmc_map)" if keys.get("vegas.qmc_map") else "")
    return mode


def plot_vs_n(paths, out):
    lines, name = {}, None
    for path in paths:
        log = read_log(path)
        exact = log.exact
        if exact is None:
            sys.exit("strata-plot: %s: no exact value to measure errors against" % path)
        it = log.table
        if len(it) == 0:
            continue
        name = title(log).rsplit(",", 2)[0]
        err = np.sqrt(np.mean((it["integral"] - exact) ** 2))
        sig = np.sqrt(np.mean(it["sigma"] ** 2))
        lines.setdefault(point_set(log), []).append((float(it["neval"][-1]), err, sig))
    if not lines:
        sys.exit("strata-plot: no iterations in any log")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, (lab, pts) in enumerate(sorted(lines.items())):
        n, e, s = (np.array(v) for v in zip(*sorted(pts)))
        slope = np.polyfit(np.log(n), np.log(e), 1)[0] if len(n) > 1 else float("nan")
        ax.loglog(n, e, "o-", ms=3, color="C%d" % k, label="%s: N^%.2f" % (lab, slope))
        ax.loglog(n, s, "--", lw=1, color="C%d" % k)
    allpts = [p for v in lines.values() for p in v]
    n0 = min(p[0] for p in allpts)
    e0 = max(p[1] for p in allpts if p[0] == n0)
    x = np.array([n0, max(p[0] for p in allpts)])
    ax.loglog(x, e0 * np.sqrt(n0 / x), ":", color="k", lw=1, label=r"$\propto N^{-1/2}$")
    ax.loglog(x, e0 * (n0 / x), ":", color="0.5", lw=1, label=r"$\propto N^{-1}$")
    ax.set_xlabel("points per iteration N")
    ax.set_ylabel("rms error of one iteration (dashed: rms sigma)")
    ax.set_title(name or "")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None, prog="strata-plot"):
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("log", nargs="+", help="a convergence log written by strata run (run.log)")
    p.add_argument("-o", "--prefix", help="output file prefix (default: LOG without .h5)")
    p.add_argument("--vs-n", action="store_true",
                   help="error against points per iteration over several logs")
    p.add_argument("--comp", type=int, metavar="N",
                   help="a vector run: component N only (default: every component, a panel each)")
    args = p.parse_args(argv)
    try:
        _pyplot()
    except ImportError:
        sys.exit("%s: needs matplotlib: pip install matplotlib (in a virtual environment: "
                 "python3 -m venv ~/.venvs/strata && ~/.venvs/strata/bin/pip install h5py "
                 "matplotlib), or on Debian apt install python3-matplotlib" % prog)
    try:
        return _main(args, prog)
    except StrataError as e:
        sys.exit("%s: %s" % (prog, e))


def _main(args, prog):
    if args.vs_n:
        if not args.prefix:
            sys.exit("%s: --vs-n needs -o PREFIX" % prog)
        plot_vs_n(args.log, args.prefix + "-vs-n.png")
        print(args.prefix + "-vs-n.png")
        return
    if len(args.log) != 1:
        sys.exit("%s: one log at a time (or --vs-n)" % prog)
    path = args.log[0]
    prefix = args.prefix or (path[:-3] if path.endswith(".h5") else path)
    log = read_log(path)
    if len(log.table) == 0:
        sys.exit("%s: %s: no iterations yet" % (prog, path))
    n = log.ncomp
    if args.comp is not None and not 0 <= args.comp < n:
        sys.exit("%s: %s: --comp %d: the run has %d component%s (0..%d)"
                 % (prog, path, args.comp, n, "" if n == 1 else "s", n - 1))
    comps = [args.comp] if args.comp is not None else list(range(min(n, MAX_COV_COMP)))
    if len(comps) < n and args.comp is None:
        print("%s: %s: components 0-%d of %d drawn (--comp N for another)"
              % (prog, path, len(comps) - 1, n), file=sys.stderr)
    written = [prefix + "-estimate.png", prefix + "-error.png"]
    plot_components(log, comps, draw_estimate, "iteration", written[0])
    plot_components(log, comps, draw_error, "evaluations N (cumulative)", written[1])
    if plot_maps(log, prefix + "-map.png"):
        written.append(prefix + "-map.png")
    else:
        print("%s: %s has no map snapshot yet: no map plot" % (prog, path), file=sys.stderr)
    for w in written:
        print(w)


if __name__ == "__main__":
    main(prog="python -m strata_mc.plot")
