#!/usr/bin/env python3
"""A check script's timings as a chart: every `*_vs_<reference>` ratio of its
`perf` rows (softmax, layer norm, cross entropy, attention: ours against
torch, Triton or flash attention), or the `ratio` of its `timings` rows (the
fused linear + ReLU against torch), one bar group per shape, with the 1.0 line.

    python3 scripts/gpu/ratio_plot.py RESULTS/softmax_check.json ...   # writes softmax_check.png beside each

The check scripts call `plot_after` when they write their JSON; without
matplotlib they say so and the JSON and tables stand alone."""

import json
import os
import sys

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]


def row_name(row):
    """'float16 4096x1024', plus head_dim and causal for attention."""
    shape = row.get("shape")
    parts = [str(row.get("dtype", "")).replace("torch.", "")]
    if isinstance(shape, (list, tuple)):
        parts.append("x".join(str(s) for s in shape))
    if "head_dim" in row:
        parts.append(f"d{row['head_dim']}")
    if row.get("causal"):
        parts.append("causal")
    return " ".join(p for p in parts if p)


def ratio_keys(rows):
    """The `*_vs_*` keys with numbers, in first-seen order."""
    keys = []
    for row in rows:
        for k, v in row.items():
            if ("_vs_" in k or k == "ratio") and isinstance(v, (int, float)) and k not in keys:
                keys.append(k)
    return keys


def plot(path):
    """Writes the chart of `path` (a check's JSON) beside it; returns the PNG's
    path, or None when the file has no ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(path) as f:
        data = json.load(f)
    rows = data.get("perf") or data.get("timings") or []
    keys = ratio_keys(rows)
    if not rows or not keys:
        return None
    group = 0.8 / len(keys)
    fig, ax = plt.subplots(figsize=(8, max(3.0, 0.32 * len(rows) * len(keys) + 1.5)))
    for i, key in enumerate(keys):
        ys = [y - 0.4 + group * (i + 0.5) for y in range(len(rows))]
        values = [r.get(key) or 0 for r in rows]
        label = "ours / torch" if key == "ratio" else key.replace("_vs_", " / ")
        ax.barh(ys, values, height=group, label=label, color=COLORS[i % len(COLORS)])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([row_name(r) for r in rows], fontsize=8)
    ax.invert_yaxis()
    env = data.get("env") or {"device": data.get("device", "")}
    name = os.path.splitext(os.path.basename(path))[0]
    ax.set_title(f"{name}: {env.get('device', '')} {env.get('date', '')}".strip(), fontsize=10)
    ax.set_xlabel("the reference's time / ours (higher: ours faster)")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    png = os.path.splitext(path)[0] + ".png"
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def plot_after(path):
    """`plot(path)` for a check script that just wrote `path`: a missing
    matplotlib is a note, not a failure of the check."""
    try:
        png = plot(path)
    except ImportError:
        print(f"no matplotlib here: chart it later with scripts/gpu/ratio_plot.py {path}")
        return
    if png:
        print(f"chart: {png}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: ratio_plot.py RESULT.json...")
    for p in sys.argv[1:]:
        print(plot(p) or f"{p}: no *_vs_* ratios")
