#!/usr/bin/python3
"""Writes the Markdown results of tools/experiments/tagger-table2.sh: Dufter et al.'s
Table 2d columns (SAN+PE[add] and the others) per treebank, next to the paper.

  tagger_results_table.py --output results.md --title TEXT --setting TEXT
                          [--system LABEL=SUBDIR ...] [--seeds S1,S2,...]
                          TREEBANK:DIR [TREEBANK:DIR ...]

--system: the systems, the first (PE[add]) the baseline of the tests; default
PE[add]=pe-add and Conv2d=conv2d. Each DIR holds the runs of one treebank: DIR/SUBDIR
(csan-train save directories: metrics.jsonl, train.log) and dev-scores.json,
test-scores.json (csan-score --task tagging --paired-bs -f json with the systems named
LABEL, the baseline first; OOV = form not in the word vocabulary, as in the authors'
evaluation). --seeds (default one seed): the first seed's runs are there, seed S's in
DIR/SUBDIR/seedS with DIR/SPLIT-scores.seedS.json. Per system: parameters, epochs run and
the best epoch, wall seconds per epoch (median), dev and test accuracy on all / OOV /
ambiguous tokens (with several seeds mean ± sample sd over seeds, and the test of
results_table.py against the baseline, Holm-adjusted across a treebank's rows), the
paper's test accuracy; then the dev accuracy after each epoch (mean over seeds).
Errors are one line naming the file; exit code 1.
"""
import argparse
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import seed_statistics as stats  # noqa: E402
from plotting import PlotError, training_log  # noqa: E402
from results_table import SEEDS_NOTE, TableError, parameters, parse_seeds  # noqa: E402  (same dir)

DEFAULT_SYSTEMS = (("PE[add]", "pe-add"), ("Conv2d", "conv2d"))
# Dufter, Schmitt & Schütze (COLING 2020), Table 2d: test accuracy (all tokens), the mean
# over three seeds; its columns are SAN+PE[add], SAN+P+R, SAN+PE[add]+Temp,
# SAN+PE[add]+Conv (our Conv1d) and SAN+PE[add]+Conv2d. It gives no standard deviation per
# treebank, and no SAN, PE[con], P or R column on UD (those are Table 2b's, PTB).
PAPER = {"LinES": {"PE[add]": 89.38, "P+R": 89.53, "Temp": 88.69, "Conv1d": 93.34, "Conv2d": 93.56},
         "GUM": {"PE[add]": 89.42, "P+R": 88.93, "Temp": 89.17, "Conv1d": 92.38, "Conv2d": 92.35},
         "AfriBooms": {"PE[add]": 92.11, "P+R": 92.02, "Temp": 92.06, "Conv1d": 94.50, "Conv2d": 94.75}}
# Table 2c: the standard deviation over seeds averaged across the 47 UD treebanks (all tokens).
PAPER_UD_AVERAGE_SD = {"PE[add]": 0.31, "P+R": 0.27, "Temp": 0.24, "Conv1d": 0.17, "Conv2d": 0.17}
METRICS = ("accuracy", "oov_accuracy", "ambiguous_accuracy")


def dev_curve(save_dir):
    """[(epoch, dev accuracy, wall seconds at that validation)], one per epoch, in order."""
    try:
        run = training_log.read_run(save_dir, os.path.basename(save_dir))
    except PlotError as e:
        raise TableError(str(e)) from None
    by_epoch = {}
    for r in run.of_kind("valid"):
        if "accuracy" not in r.data:
            raise TableError(f"{run.path}:{r.line}: valid record without 'accuracy' (not a tagging run?)")
        by_epoch[r.epoch] = (r.epoch, float(r.data["accuracy"]), r.wall)
    if not by_epoch:
        raise TableError(f"{run.path}: no validation yet")
    return [by_epoch[e] for e in sorted(by_epoch)]


def scores(path, baseline):
    """{label: system} of a csan-score --task tagging -f json file (which must score the baseline)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise TableError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise TableError(f"{path}: malformed JSON: {e.msg} (line {e.lineno})") from None
    by_name = {}
    for system in data.get("systems", []) if isinstance(data, dict) else []:
        for metric in METRICS:
            if metric not in system:
                raise TableError(f"{path}: system '{system.get('name')}' has no '{metric}'")
        by_name[system.get("name")] = system
    if baseline not in by_name:
        raise TableError(f"{path}: no system named '{baseline}'")
    return by_name


def seed_dir(directory, sub, seed, first):
    return os.path.join(directory, sub) if seed == first else os.path.join(directory, sub, f"seed{seed}")


def scores_path(directory, split, seed, first):
    return os.path.join(directory, f"{split}-scores{'' if seed == first else f'.seed{seed}'}.json")


class Run:
    """One system's run with one seed: its dev curve and its dev and test scores."""

    def __init__(self, save_dir, dev, test):
        self.save_dir, self.dev, self.test = save_dir, dev, test
        self.curve = dev_curve(save_dir)
        self.best = max(self.curve, key=lambda c: (c[1], -c[0]))  # the first epoch with the best accuracy
        walls = [b[2] - a[2] for a, b in zip([(0, 0, 0.0)] + self.curve, self.curve)]
        self.seconds_per_epoch = statistics.median(walls)


def treebank_runs(directory, systems, seeds):
    """{label: [Run per seed that scored it]}; the baseline needs every seed."""
    baseline = systems[0][0]
    runs = {label: [] for label, _ in systems}
    for seed in seeds:
        dev = scores(scores_path(directory, "dev", seed, seeds[0]), baseline)
        test = scores(scores_path(directory, "test", seed, seeds[0]), baseline)
        for label, sub in systems:
            if label in dev and label in test:
                runs[label].append(Run(seed_dir(directory, sub, seed, seeds[0]), dev[label], test[label]))
    for label, found in runs.items():
        if not found:
            raise TableError(f"{directory}: no seed has scores for {label} (seeds {', '.join(map(str, seeds))})")
    return runs


def paper_cell(treebank, label):
    paper = PAPER.get(treebank, {}).get(label)
    return f"{paper:.2f}" if paper is not None else "–"


def one_seed_rows(treebank, systems, runs):
    rows, notes = [], []
    raw = [runs[label][0].test["accuracy"].get("p_value") for label, _ in systems]
    tested = sum(p is not None for p in raw)
    for (label, _), p_value, adjusted in zip(systems, raw, stats.holm(raw)):
        run = runs[label][0]
        rows.append([treebank, label, f"{parameters(run.save_dir):,}", str(run.curve[-1][0]), str(run.best[0]),
                     f"{run.seconds_per_epoch:.1f} s"] +
                    [f"{run.dev[m]['score']:.2f}" for m in METRICS] + [f"{run.test[m]['score']:.2f}" for m in METRICS] +
                    [paper_cell(treebank, label)])
        if p_value is not None:
            notes.append(f"{treebank}: {label} vs {systems[0][0]} on test (all tokens), paired bootstrap p = {p_value:.4f}" +
                         (f" (Holm-adjusted across the {tested} tested rows: {adjusted:.4f})" if tested > 1 else ""))
    return rows, notes


def seeds_rows(treebank, systems, runs):
    baseline = systems[0][0]

    def values(label, split, metric):
        return [getattr(run, split)[metric]["score"] for run in runs[label]]

    def cell(label, split, metric):
        v = values(label, split, metric)
        return f"{stats.mean(v):.2f} ± {stats.sample_sd(v):.2f}"

    raw = {}
    for label, _ in systems:
        if label == baseline or len(runs[label]) < 2 or len(runs[baseline]) < 2:
            raw[label] = None
            continue
        raw[label] = stats.intersection_union_p([run.test["accuracy"].get("p_value") for run in runs[label]],
                                                values(baseline, "test", "accuracy"), values(label, "test", "accuracy"))
    adjusted = dict(zip(raw, stats.holm(list(raw.values()))))
    rows = []
    for label, _ in systems:
        p = adjusted[label]
        p_text = "–" if p is None else f"{p:.3f}" + ("*" if p < 0.05 else "") + f" ({raw[label]:.3f})"
        own = runs[label]
        rows.append([treebank, label, str(len(own)), f"{parameters(own[0].save_dir):,}",
                     ", ".join(str(run.curve[-1][0]) for run in own), ", ".join(str(run.best[0]) for run in own),
                     f"{stats.mean([run.seconds_per_epoch for run in own]):.1f} s"] +
                    [cell(label, "dev", m) for m in METRICS] + [cell(label, "test", m) for m in METRICS] +
                    [p_text, paper_cell(treebank, label), "–"])
    counts = {label: len(runs[label]) for label, _ in systems}
    notes = []
    if len(set(counts.values())) > 1:
        notes.append(f"**{treebank}: the systems have different numbers of seeds** (" +
                     ", ".join(f"{n}: {c}" for n, c in counts.items()) +
                     "): their means are not equally certain; a system with one seed has no test (–).")
    return rows, notes


def curve_table(treebank, systems, runs, several_seeds):
    """The dev accuracy after each epoch: per system the mean over the seeds that reached it."""
    labels = [label for label, _ in systems]
    epochs = max(len(run.curve) for label in labels for run in runs[label])
    diff = len(labels) == 2
    lines = [f"Dev accuracy (all tokens, %) after each epoch, {treebank}"
             f"{', mean over the seeds that trained that long' if several_seeds else ''}:", "",
             "| Epoch | " + " | ".join(labels) + (f" | {labels[1]} − {labels[0]} |" if diff else " |"),
             "|---:|" + "---:|" * (len(labels) + diff)]
    for e in range(epochs):
        values = []
        for label in labels:
            reached = [run.curve[e][1] for run in runs[label] if e < len(run.curve)]
            values.append(stats.mean(reached) if reached else None)
        text = [f"{v:.2f}" if v is not None else "–" for v in values]
        if diff:
            text.append(f"{values[1] - values[0]:+.2f}" if None not in values else "–")
        lines.append(f"| {e + 1} | " + " | ".join(text) + " |")
    return lines


ONE_SEED_HEADER = ("| Treebank | System | Parameters | Epochs | Best epoch | Time per epoch | Dev all | Dev OOV | "
                   "Dev ambiguous | Test all | Test OOV | Test ambiguous | Paper test all |")
ACCURACY_NOTE = ("Accuracy in % on all tokens, on OOV tokens (form not in the word vocabulary: the convatt "
                 "protocol keeps the most frequent half of the word types of train+dev+test) and on ambiguous "
                 "tokens (not OOV, 2+ tags in the training data); best checkpoint by dev accuracy. The paper's "
                 "column is its Table 2d (test, all tokens)")


def seeds_header(baseline):
    return ("| Treebank | System | Seeds | Parameters | Epochs | Best epoch | Time per epoch | Dev all | Dev OOV | "
            f"Dev ambiguous | Test all | Test OOV | Test ambiguous | p (test all) vs {baseline} | Paper test all | "
            "Paper sd |")


def parse_systems(entries):
    systems = []
    for entry in entries or []:
        label, sep, sub = entry.partition("=")
        if not sep or not label or not sub:
            raise TableError(f"--system '{entry}': expected LABEL=SUBDIR")
        if label in dict(systems):
            raise TableError(f"--system '{entry}': {label} is given twice")
        systems.append((label, sub))
    return systems or list(DEFAULT_SYSTEMS)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--output", required=True)
    p.add_argument("--title", required=True)
    p.add_argument("--setting", required=True)
    p.add_argument("--system", action="append", metavar="LABEL=SUBDIR", help="in order, the baseline first")
    p.add_argument("--seeds", default="1", help="the seeds, the first in SUBDIR (default one seed)")
    p.add_argument("treebanks", nargs="+", metavar="TREEBANK:DIR")
    args = p.parse_args(argv)
    systems, seeds = parse_systems(args.system), parse_seeds(args.seeds)
    several = len(seeds) > 1
    header = seeds_header(systems[0][0]) if several else ONE_SEED_HEADER
    lines = [f"# {args.title}", "", args.setting, "", header, "|---|---|" + "---:|" * (header.count("|") - 3)]
    sections, notes = [], []
    for spec in args.treebanks:
        treebank, sep, directory = spec.partition(":")
        if not sep or not treebank or not directory:
            raise TableError(f"'{spec}': expected TREEBANK:DIR")
        runs = treebank_runs(directory, systems, seeds)
        rows, treebank_notes = (seeds_rows if several else one_seed_rows)(treebank, systems, runs)
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        notes += treebank_notes
        sections += [""] + curve_table(treebank, systems, runs, several)
    if several:
        lines += ["", ACCURACY_NOTE + "; it gives no standard deviation per treebank (Paper sd: –), only its "
                  "average over the 47 UD treebanks in Table 2c: " +
                  ", ".join(f"{label} {sd:.2f}" for label, sd in PAPER_UD_AVERAGE_SD.items()) + ". Epochs and best "
                  "epoch: one per seed, in seed order; time per epoch: the median wall seconds between validations "
                  "(validation included), averaged over seeds. The test is on test accuracy (all tokens), and Holm's "
                  "adjustment is across the rows of one treebank. " + SEEDS_NOTE]
    else:
        lines += ["", ACCURACY_NOTE + ". Time per epoch: median wall seconds between validations, validation "
                  "included."]
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    lines += sections
    text = "\n".join(lines) + "\n"
    temp = args.output + ".tmp"
    try:
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, args.output)
    except OSError as e:
        raise TableError(f"{args.output}: cannot write: {e.strerror}") from None


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except TableError as e:
        print(f"tagger_results_table.py: error: {e}", file=sys.stderr)
        sys.exit(1)
