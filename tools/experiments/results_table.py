#!/usr/bin/python3
"""Writes the Markdown results table of a comparison run by a tools/experiments script.

  results_table.py --output results.md --title TEXT --setting TEXT
                   --valid-scores valid.json --test-scores test.json
                   NAME=SAVE_DIR [NAME=SAVE_DIR ...]

The first system is the baseline. For each system: parameters (from SAVE_DIR/train.log,
csan-train's "model ...: N parameters" line), time per update (the median over log
intervals of 1/ups in SAVE_DIR/metrics.jsonl, so intervals that include a validation do
not count), BLEU and chrF on valid and test (csan-score --paired-bs -f json, whose
systems are named NAME) and the paired-bootstrap p-values against the baseline on test.
--relative adds each system's parameters beyond the baseline's and its speed relative
to the baseline's (baseline time per update / the system's). --paper-columns FILE adds
columns quoted from a paper: JSON {"columns": [header, ...], "rows": {NAME: [cell, ...]}}
(a system without a row gets "–"). --runs adds a paragraph saying what produced each
system (csan version, device, precision, CPU and start date from SAVE_DIR/run.json and
train.log), for a table assembled from runs made elsewhere.

--seeds S1,S2,... (with --valid-scores and --test-scores given once per seed, in that order,
each csan-score --paired-bs over the systems that have that seed, the baseline first): the
systems trained once per seed, seed 1 in SAVE_DIR and seed S in SAVE_DIR/seedS. Each score
is then the mean ± sample standard deviation over the system's seeds, and the p-values
are those of an intersection-union test, Holm-adjusted across the table's rows (see
SEEDS_NOTE). With one seed the table is the one-seed table.
Errors are one line naming the file; exit code 1.
"""
import argparse
import json
import os
import re
import statistics
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import seed_statistics as stats  # noqa: E402


class TableError(Exception):
    pass


def parameters(save_dir):
    path = os.path.join(save_dir, "train.log")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            found = re.findall(r"([0-9][0-9,]*) parameters", f.read())
    except OSError as e:
        raise TableError(f"{path}: cannot read: {e.strerror}") from None
    if not found:
        raise TableError(f"{path}: no 'N parameters' line (did csan-train start?)")
    return int(found[-1].replace(",", ""))


def seconds_per_update(save_dir):
    path = os.path.join(save_dir, "metrics.jsonl")
    per_update = []
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TableError(f"{path}:{number}: malformed JSON record: {e.msg}") from None
                if record.get("kind") == "train" and record.get("ups", 0) > 0:
                    per_update.append(1.0 / record["ups"])
    except OSError as e:
        raise TableError(f"{path}: cannot read: {e.strerror}") from None
    if not per_update:
        raise TableError(f"{path}: no train records with 'ups'")
    return statistics.median(per_update)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise TableError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise TableError(f"{path}:{e.lineno}: malformed JSON: {e.msg}") from None


def paired_scores(path, names):
    """{name: {metric: {"score", "p_value", ...}}} from csan-score --paired-bs -f json."""
    systems = load_json(path)
    by_name = {}
    for system in systems if isinstance(systems, list) else []:
        name = str(system.get("system", "")).removeprefix("Baseline: ")
        by_name[os.path.basename(name)] = system
    missing = [n for n in names if n not in by_name]
    if missing:
        raise TableError(f"{path}: no scores for {', '.join(missing)} (systems: {', '.join(by_name) or 'none'})")
    return by_name


def metric(system, prefix):
    for key, value in system.items():
        if key.lower().startswith(prefix):
            return value
    raise TableError(f"no {prefix} score for system '{system.get('system')}'")


def p_value(system, prefix):
    p = metric(system, prefix).get("p_value")
    if p is None:
        return "–"
    return f"{p:.3f}" + ("*" if p < 0.05 else "")


def run_description(save_dir):
    """'csan VERSION, on DEVICE, PRECISION, CPU' of one run, from its run.json and train.log."""
    path = os.path.join(save_dir, "run.json")
    run = load_json(path)
    if not isinstance(run, dict):
        raise TableError(f"{path}: expected a JSON object")
    log = os.path.join(save_dir, "train.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            devices = re.findall(r"parameters, on ([^, (\n]+)", f.read())
    except OSError as e:
        raise TableError(f"{log}: cannot read: {e.strerror}") from None
    parts = [f"csan {run.get('csan_version', '?')}", f"on {devices[-1] if devices else '?'}",
             str(run.get("precision", "?")), f"{run.get('cpu', '?')} ({run.get('threads', '?')} threads)",
             f"started {str(run.get('started', '?'))[:10]}"]
    return ", ".join(parts)


def runs_paragraph(systems):
    groups = {}
    for name, save_dir in systems:
        groups.setdefault(run_description(save_dir), []).append(name)
    return "Runs: " + "; ".join(f"{', '.join(names)}: {what}" for what, names in groups.items()) + "."


def paper_columns(path, names):
    """(headers, {name: cells}) from a --paper-columns JSON file."""
    paper = load_json(path)
    headers, rows = (paper.get("columns"), paper.get("rows")) if isinstance(paper, dict) else (None, None)
    if not isinstance(headers, list) or not isinstance(rows, dict):
        raise TableError(f"{path}: expected {{\"columns\": [...], \"rows\": {{NAME: [...]}}}}")
    for name, cells in rows.items():
        if not isinstance(cells, list) or len(cells) != len(headers):
            raise TableError(f"{path}: row '{name}' needs {len(headers)} cells")
        if name not in names:
            raise TableError(f"{path}: row '{name}' is not a system of the table ({', '.join(names)})")
    return headers, rows


def header_rows(baseline, relative, paper_headers, seeds_column):
    """The header and alignment rows of a results table."""
    extra = (["Parameters added", f"Speed vs {baseline}"] if relative else []) + paper_headers
    seeds = " Seeds |" if seeds_column else ""
    return [f"| System |{seeds} Parameters | Time per update | Valid BLEU | Valid chrF2 | Test BLEU | Test chrF2 "
            f"| p (BLEU) vs {baseline} | p (chrF2) vs {baseline} |" + "".join(f" {h} |" for h in extra),
            "|---|" + "--:|" * (8 + bool(seeds_column) + len(extra))]


def table(systems, valid, test, relative=False, paper=None):
    baseline = systems[0][0]
    headers, paper_rows = paper if paper else ([], {})
    rows = header_rows(baseline, relative, headers, seeds_column=False)
    base_parameters, base_time = parameters(systems[0][1]), seconds_per_update(systems[0][1])
    for name, save_dir in systems:
        v, t = valid[name], test[name]
        count, time = parameters(save_dir), seconds_per_update(save_dir)
        cells = [f"{count - base_parameters:+,}", f"{base_time / time:.2f}"] if relative else []
        cells += paper_rows.get(name, ["–"] * len(headers))
        rows.append(f"| {name} | {count:,} | {time:.3f} s "
                    f"| {metric(v, 'bleu')['score']:.2f} | {metric(v, 'chrf')['score']:.2f} "
                    f"| {metric(t, 'bleu')['score']:.2f} | {metric(t, 'chrf')['score']:.2f} "
                    f"| {p_value(t, 'bleu')} | {p_value(t, 'chrf')} |" + "".join(f" {c} |" for c in cells))
    return "\n".join(rows) + "\n"


SEEDS_NOTE = (
    "Scores: mean ± sample standard deviation over the system's seeds (column Seeds). "
    "p: an intersection-union test of two parts, each of which must reject: csan-score's paired "
    "bootstrap (1,000 resamples, seed 12345) against the first system on test, run for every seed "
    "(test-set sampling; its largest p over the seeds counts), and Welch's t-test between the two "
    "systems' test scores over seeds (training variance: initialisation and batch order). The "
    "p-value of such a test is the larger of the two; it is Holm-Bonferroni-adjusted across the "
    "rows of this table (each column separately), and in parentheses before the adjustment; * marks an "
    "adjusted p < 0.05. Why this test: "
    "the bootstrap alone measures only the test set's sampling, a test over seed means alone "
    "ignores it, and a difference needs to hold under both. With 2-3 seeds the t-test has "
    "little power: a large p says the seeds do not settle the difference, not that there is none.")


def seed_dir(save_dir, seed):
    """Where seed SEED of a system trained (tools/experiments/common.sh, seed_save_dir)."""
    return save_dir if seed == 1 else os.path.join(save_dir, f"seed{seed}")


def parse_seeds(text):
    try:
        seeds = [int(s) for s in text.split(",")]
    except ValueError:
        raise TableError(f"--seeds '{text}': expected positive integers separated by commas") from None
    if not seeds or min(seeds) < 1 or len(set(seeds)) != len(seeds):
        raise TableError(f"--seeds '{text}': expected distinct positive integers")
    return seeds


def seed_scores(seeds, paths, names, option):
    """{seed: {name: system}} from one csan-score file per seed; a seed's file may lack
    systems (not trained with that seed), never the baseline."""
    if len(paths) != len(seeds):
        raise TableError(f"{option}: {len(paths)} files for {len(seeds)} seeds")
    by_seed = {}
    for seed, path in zip(seeds, paths):
        systems = paired_scores(path, names[:1])
        by_seed[seed] = {n: systems[n] for n in names if n in systems}
    for name in names:
        if not any(name in systems for systems in by_seed.values()):
            raise TableError(f"{option}: no seed has scores for {name}")
    return by_seed


def seeds_table(systems, seeds, valid, test, relative=False, paper=None):
    baseline = systems[0][0]
    headers, paper_rows = paper if paper else ([], {})
    rows = header_rows(baseline, relative, headers, seeds_column=True)

    def own_seeds(name):
        return [s for s in seeds if name in test[s] and name in valid[s]]

    def values(by_seed, name, prefix):
        return [metric(by_seed[s][name], prefix)["score"] for s in own_seeds(name)]

    def cell(by_seed, name, prefix):
        v = values(by_seed, name, prefix)
        return f"{stats.mean(v):.2f} ± {stats.sample_sd(v):.2f}"

    def combined_p(name, prefix):
        """max(the largest per-seed bootstrap p, Welch's p over seeds); None without a test."""
        if name == baseline or len(own_seeds(name)) < 2:
            return None
        return stats.intersection_union_p([metric(test[s][name], prefix).get("p_value") for s in own_seeds(name)],
                                          values(test, baseline, prefix), values(test, name, prefix))

    raw = {prefix: {n: combined_p(n, prefix) for n, _ in systems} for prefix in ("bleu", "chrf")}
    adjusted = {prefix: dict(zip(raw[prefix], stats.holm(list(raw[prefix].values())))) for prefix in raw}

    def p_cell(name, prefix):
        p = adjusted[prefix][name]
        return "–" if p is None else f"{p:.3f}" + ("*" if p < 0.05 else "") + f" ({raw[prefix][name]:.3f})"

    def mean_time(name, save_dir):
        return stats.mean([seconds_per_update(seed_dir(save_dir, s)) for s in own_seeds(name)])

    first = own_seeds(baseline)[0]
    base_parameters = parameters(seed_dir(systems[0][1], first))
    base_time = mean_time(baseline, systems[0][1])
    for name, save_dir in systems:
        count, time = parameters(seed_dir(save_dir, own_seeds(name)[0])), mean_time(name, save_dir)
        cells = [f"{count - base_parameters:+,}", f"{base_time / time:.2f}"] if relative else []
        cells += paper_rows.get(name, ["–"] * len(headers))
        rows.append(f"| {name} | {len(own_seeds(name))} | {count:,} | {time:.3f} s "
                    f"| {cell(valid, name, 'bleu')} | {cell(valid, name, 'chrf')} "
                    f"| {cell(test, name, 'bleu')} | {cell(test, name, 'chrf')} "
                    f"| {p_cell(name, 'bleu')} | {p_cell(name, 'chrf')} |" + "".join(f" {c} |" for c in cells))
    counts = {name: len(own_seeds(name)) for name, _ in systems}
    note = ""
    if len(set(counts.values())) > 1:
        note = ("\n**The systems have different numbers of seeds** (" +
                ", ".join(f"{n}: {c}" for n, c in counts.items()) + "): their means are not equally certain; "
                "a system with one seed has no test (–).\n")
    return "\n".join(rows) + "\n" + note


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True)
    parser.add_argument("--title", required=True)
    parser.add_argument("--setting", required=True, help="one paragraph: data, recipe, updates, machine")
    parser.add_argument("--valid-scores", required=True, action="append", help="once per seed, in --seeds order")
    parser.add_argument("--test-scores", required=True, action="append", help="once per seed, in --seeds order")
    parser.add_argument("--seeds", default="1", help="the seeds, in the order of the score files (default 1)")
    parser.add_argument("--relative", action="store_true", help="add parameters added and speed vs the baseline")
    parser.add_argument("--paper-columns", metavar="JSON", help="columns quoted from a paper (see above)")
    parser.add_argument("--runs", action="store_true", help="say what produced each system (run.json)")
    parser.add_argument("systems", nargs="+", metavar="NAME=SAVE_DIR")
    args = parser.parse_args(argv)
    try:
        systems = []
        for entry in args.systems:
            name, sep, save_dir = entry.partition("=")
            if not sep or not name or not save_dir:
                raise TableError(f"'{entry}': expected NAME=SAVE_DIR")
            systems.append((name, save_dir))
        names = [n for n, _ in systems]
        seeds = parse_seeds(args.seeds)
        paper = paper_columns(args.paper_columns, names) if args.paper_columns else None
        if len(seeds) == 1:
            if len(args.valid_scores) != 1 or len(args.test_scores) != 1:
                raise TableError("one seed: give one --valid-scores and one --test-scores file")
            valid = paired_scores(args.valid_scores[0], names)
            test = paired_scores(args.test_scores[0], names)
            systems = [(n, seed_dir(d, seeds[0])) for n, d in systems]
            setting = args.setting + ("\n\n" + runs_paragraph(systems) if args.runs else "")
            text = (f"# {args.title}\n\n{setting}\n\n{table(systems, valid, test, args.relative, paper)}\n"
                    "Time per update: median over log intervals. BLEU and chrF2: csan-score (sacreBLEU 2.6.0, "
                    "13a tokenization) on detokenized output. p: paired bootstrap resampling (1,000 samples, "
                    "seed 12345) against the first system on test; * marks p < 0.05.\n")
        else:
            valid = seed_scores(seeds, args.valid_scores, names, "--valid-scores")
            test = seed_scores(seeds, args.test_scores, names, "--test-scores")
            setting = args.setting
            if args.runs:
                setting += "\n\n" + runs_paragraph([(f"{n} (seed {s})", seed_dir(d, s)) for n, d in systems for s in seeds
                                                      if n in test[s]])
            text = (f"# {args.title}\n\n{setting}\n\n{seeds_table(systems, seeds, valid, test, args.relative, paper)}\n"
                    "Time per update: median over log intervals, averaged over seeds. BLEU and chrF2: csan-score "
                    "(sacreBLEU 2.6.0, 13a tokenization) on detokenized output. " + SEEDS_NOTE + "\n")
        temp = f"{args.output}.tmp.{os.getpid()}"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, args.output)
    except TableError as e:
        print(f"results_table: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"results_table: error: {args.output}: cannot write: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
