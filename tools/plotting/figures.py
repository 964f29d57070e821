"""Draws the figures with matplotlib (Agg, no display) and saves them atomically."""
import os

from . import PlotError
from .training_log import finite, fractional_epochs

METRIC_LABELS = {"bleu": "BLEU", "chrf": "chrF", "accuracy": "accuracy"}
METRIC_UNITS = {"bleu": "BLEU (sacreBLEU, 0-100)", "chrf": "chrF (0-100)", "accuracy": "accuracy (%)"}


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotError("matplotlib is not installed (tools/install-deps.sh --plots installs Debian's "
                        "python3-matplotlib; run plot-curves with /usr/bin/python3)") from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text: smaller, editable, searchable
    import matplotlib.pyplot as plt
    return plt


def _wall_scale(runs):
    longest = max((r.wall for run in runs for r in run.records), default=0)
    if longest >= 2 * 3600:
        return 3600.0, "wall time (hours)"
    if longest >= 120:
        return 60.0, "wall time (minutes)"
    return 1.0, "wall time (seconds)"


def _x_values(run, x_axis, wall_scale):
    if x_axis == "update":
        return {id(r): r.update for r in run.records}
    if x_axis == "epoch":
        return fractional_epochs(run)
    return {id(r): r.wall / wall_scale for r in run.records}


def _points(run, kind, key, x_axis, wall_scale):
    xs = _x_values(run, x_axis, wall_scale)
    return [(xs[id(r)], r.data[key]) for r in run.of_kind(kind) if finite(r.data.get(key))]


def seed_groups(runs):
    """The runs grouped by label, in the order of first appearance: runs that share a label
    are the seeds of one system."""
    groups = {}
    for run in runs:
        groups.setdefault(run.label, []).append(run)
    return list(groups.values())


def mean_curve(curves):
    """The mean of several runs' (x, y) points at the x values all of them have (the seeds of
    one recipe log and validate at the same updates); [] when one has no points."""
    if not curves or not all(curves):
        return []
    by_x = [dict(points) for points in curves]
    common = sorted(set(by_x[0]).intersection(*by_x[1:]))
    return [(x, sum(d[x] for d in by_x) / len(by_x)) for x in common]


def learning_curves(runs, x_axis, metric, title):
    plt = import_pyplot()
    wall_scale, wall_label = _wall_scale(runs)
    x_label = {"update": "updates", "epoch": "epochs", "wall": wall_label}[x_axis]
    panels = [("train", "loss", "training loss", "loss (bits/token)"),
              ("valid", "loss", "validation loss", "loss (bits/token)")]
    if metric:
        name = METRIC_LABELS.get(metric, metric)
        panels.append(("valid", metric, f"validation {name}", METRIC_UNITS.get(metric, name)))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, group in enumerate(seed_groups(runs)):
        color = colors[i % len(colors)]
        for ax, (kind, key, _, _) in zip(axes[0], panels):
            marker = "o" if kind == "valid" else None
            curves = [_points(run, kind, key, x_axis, wall_scale) for run in group]
            if len(group) == 1:
                if curves[0]:
                    ax.plot(*zip(*curves[0]), color=color, label=group[0].label, marker=marker, markersize=3.5,
                            linewidth=1.5)
                continue
            # Several runs of one label are one system's seeds: each faintly, their mean boldly.
            for points in curves:
                if points:
                    ax.plot(*zip(*points), color=color, alpha=0.3, linewidth=0.8)
            mean = mean_curve(curves)
            if mean:
                ax.plot(*zip(*mean), color=color, label=f"{group[0].label} (mean of {len(group)} seeds)",
                        marker=marker, markersize=3.5, linewidth=2.2)
    for ax, (_, _, panel_title, y_label) in zip(axes[0], panels):
        ax.set_title(panel_title)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(True, alpha=0.3)
        if ax.has_data():
            ax.legend(fontsize="small")
        else:
            ax.text(0.5, 0.5, "no records", ha="center", va="center", transform=ax.transAxes, color="gray")
    fig.suptitle(title or "Learning curves: " + ", ".join(group[0].label for group in seed_groups(runs)))
    fig.tight_layout()
    return fig


def significance_bars(metrics, systems, title):
    plt = import_pyplot()
    fig, axes = plt.subplots(1, len(metrics), figsize=(max(4.5, 1.3 * len(systems) + 1.5) * len(metrics), 4.6),
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    positions = list(range(len(systems)))
    for ax, metric in zip(axes[0], metrics):
        means = [s.scores[metric]["mean"] for s in systems]
        cis = [s.scores[metric]["ci"] for s in systems]
        ax.bar(positions, means, yerr=cis, capsize=6, color=[colors[i % len(colors)] for i in positions],
               alpha=0.85, edgecolor="black", linewidth=0.6)
        top = max(m + c for m, c in zip(means, cis))
        for x, s, mean, ci in zip(positions, systems, means, cis):
            p = s.scores[metric].get("p_value")
            note = f"{mean:.1f} ± {ci:.1f}"
            if not s.is_baseline and p is not None:
                note += f"\np = {p:.3f}" + (" *" if p < 0.05 else "")
            ax.text(x, mean + ci + 0.02 * top, note, ha="center", va="bottom", fontsize="small")
        ax.set_xticks(positions)
        ax.set_xticklabels([s.name + ("\n(baseline)" if s.is_baseline else "") for s in systems])
        ax.set_ylim(0, top * 1.22)
        ax.set_ylabel(f"{metric} (bootstrap mean ± 95% CI)")
        ax.set_title(metric)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title or "Paired bootstrap resampling against the baseline (* p < 0.05)")
    fig.tight_layout()
    return fig


def save_atomically(fig, output, fmt):
    directory = os.path.dirname(os.path.abspath(output))
    temp = os.path.join(directory, f".{os.path.basename(output)}.tmp.{os.getpid()}")
    try:
        fig.savefig(temp, format=fmt, dpi=110, metadata={"Date": None} if fmt in ("svg", "pdf") else None)
        os.replace(temp, output)
    except OSError as e:
        try:
            os.remove(temp)
        except OSError:
            pass
        raise PlotError(f"{output}: cannot write: {e.strerror}") from None
