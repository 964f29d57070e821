#!/usr/bin/python3
"""Writes the Markdown results of tools/experiments/tagger-table2.sh: Dufter et al.'s
Table 2d rows SAN+PE[add] and SAN+PE[add]+Conv2d per treebank, next to the paper.

  tagger_results_table.py --output results.md --title TEXT --setting TEXT
                          TREEBANK:DIR [TREEBANK:DIR ...]

Each DIR holds the runs of one treebank: pe-add/ and conv2d/ (csan-train save directories:
metrics.jsonl, train.log) and dev-scores.json, test-scores.json (csan-score --task tagging
-f json with the systems named PE[add] and Conv2d; OOV = form not in the word vocabulary,
as in the authors' evaluation). Per system: parameters, epochs run and the best epoch,
wall seconds per epoch (median), dev and test accuracy on all / OOV / ambiguous tokens,
the paper's test accuracy; then the dev accuracy after each epoch of both systems.
Errors are one line naming the file; exit code 1.
"""
import argparse
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
from plotting import PlotError, training_log  # noqa: E402
from results_table import TableError, parameters  # noqa: E402  (the translation table's, same dir)

SYSTEMS = (("PE[add]", "pe-add"), ("Conv2d", "conv2d"))
# Dufter, Schmitt & Schütze (COLING 2020), Table 2d, test accuracy (all tokens).
PAPER = {"LinES": {"PE[add]": 89.38, "Conv2d": 93.56},
         "GUM": {"PE[add]": 89.42, "Conv2d": 92.35},
         "AfriBooms": {"PE[add]": 92.11, "Conv2d": 94.75}}
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


def scores(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise TableError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise TableError(f"{path}: malformed JSON: {e.msg} (line {e.lineno})") from None
    by_name = {}
    for system in data.get("systems", []):
        by_name[system.get("name")] = system
    for name, _ in SYSTEMS:
        if name not in by_name:
            raise TableError(f"{path}: no system named '{name}'")
        for metric in METRICS:
            if metric not in by_name[name]:
                raise TableError(f"{path}: system '{name}' has no '{metric}'")
    return data, by_name


def cell(system, metric):
    return f"{system[metric]['score']:.2f}"


def treebank_rows(treebank, directory):
    dev, dev_systems = scores(os.path.join(directory, "dev-scores.json"))
    test, test_systems = scores(os.path.join(directory, "test-scores.json"))
    rows, curves = [], {}
    for name, sub in SYSTEMS:
        save_dir = os.path.join(directory, sub)
        curve = dev_curve(save_dir)
        curves[name] = curve
        best = max(curve, key=lambda c: (c[1], -c[0]))  # the first epoch with the best accuracy
        walls = [b[2] - a[2] for a, b in zip([(0, 0, 0.0)] + curve, curve)]
        paper = PAPER.get(treebank, {}).get(name)
        rows.append([treebank, name, f"{parameters(save_dir):,}", str(curve[-1][0]), str(best[0]),
                     f"{statistics.median(walls):.1f} s"] +
                    [cell(dev_systems[name], m) for m in METRICS] + [cell(test_systems[name], m) for m in METRICS] +
                    [f"{paper:.2f}" if paper is not None else "–"])
    p_value = test_systems["Conv2d"]["accuracy"].get("p_value")
    return rows, curves, dev, p_value


def curve_table(treebank, curves):
    epochs = max(len(c) for c in curves.values())
    lines = [f"Dev accuracy (all tokens, %) after each epoch, {treebank}:", "",
             "| Epoch | " + " | ".join(name for name, _ in SYSTEMS) + " | Conv2d − PE[add] |",
             "|---:|" + "---:|" * (len(SYSTEMS) + 1)]
    for e in range(epochs):
        values = [curves[name][e][1] if e < len(curves[name]) else None for name, _ in SYSTEMS]
        text = [f"{v:.2f}" if v is not None else "–" for v in values]
        diff = f"{values[1] - values[0]:+.2f}" if None not in values else "–"
        lines.append(f"| {e + 1} | " + " | ".join(text) + f" | {diff} |")
    return lines


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--output", required=True)
    p.add_argument("--title", required=True)
    p.add_argument("--setting", required=True)
    p.add_argument("treebanks", nargs="+", metavar="TREEBANK:DIR")
    args = p.parse_args(argv)
    header = ("| Treebank | System | Parameters | Epochs | Best epoch | Time per epoch | Dev all | Dev OOV | "
              "Dev ambiguous | Test all | Test OOV | Test ambiguous | Paper test all |")
    lines = [f"# {args.title}", "", args.setting, "", header, "|---|---|" + "---:|" * 11]
    sections, notes = [], []
    for spec in args.treebanks:
        treebank, sep, directory = spec.partition(":")
        if not sep or not treebank or not directory:
            raise TableError(f"'{spec}': expected TREEBANK:DIR")
        rows, curves, dev, p_value = treebank_rows(treebank, directory)
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        sections += [""] + curve_table(treebank, curves)
        if p_value is not None:
            notes.append(f"{treebank}: Conv2d vs PE[add] on test (all tokens), paired bootstrap p = {p_value:.4f}")
    lines += ["", "Accuracy in % on all tokens, on OOV tokens (form not in the word vocabulary: the convatt "
              "protocol keeps the most frequent half of the word types of train+dev+test) and on ambiguous "
              "tokens (not OOV, 2+ tags in the training data); best checkpoint by dev accuracy. The paper's "
              "column is its Table 2d (test, all tokens). Time per epoch: median wall seconds between "
              "validations, validation included."]
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
