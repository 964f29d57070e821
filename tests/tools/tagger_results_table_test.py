"""tools/experiments/tagger_results_table.py with several seeds, on hand-made runs: the mean ±
sample sd of the seeds' accuracies, the intersection-union test against PE[add] with Holm
across a treebank's rows, a table whose systems have different numbers of seeds, and a
score file without the baseline as a one-line error. Runs as /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE_DIR, "tools", "experiments", "tagger_results_table.py")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools", "experiments"))
import seed_statistics as stats  # noqa: E402

SYSTEMS = (("PE[add]", "pe-add"), ("Conv2d", "conv2d"), ("SAN", "san"))
# Test accuracy (all tokens) per seed (1, 2, 3) and system; dev is test - 1.
TEST = {"PE[add]": [90.0, 91.0, 92.0], "Conv2d": [94.0, 94.5, 95.0], "SAN": [89.0, 92.0, 91.0]}
BOOTSTRAP_P = {"Conv2d": [0.001, 0.002, 0.004], "SAN": [0.3, 0.2, 0.5]}


def write_run(save_dir, accuracy):
    os.makedirs(save_dir, exist_ok=True)
    with open(os.path.join(save_dir, "train.log"), "w", encoding="utf-8") as f:
        f.write("model tagger: 1,234 parameters, on cpu\n")
    with open(os.path.join(save_dir, "metrics.jsonl"), "w", encoding="utf-8") as f:
        for epoch, wall in ((1, 10.0), (2, 21.0)):
            f.write(json.dumps({"kind": "valid", "epoch": epoch, "update": 10 * epoch, "wall": wall,
                                "accuracy": accuracy - 2 + epoch, "loss": 1.0 / epoch, "task": "tagging"}) + "\n")


def write_scores(path, seed_index, split, systems):
    entries = []
    for name in systems:
        score = TEST[name][seed_index] - (1 if split == "dev" else 0)
        entry = {"name": name}
        for metric in ("accuracy", "oov_accuracy", "ambiguous_accuracy"):
            entry[metric] = {"score": score}
        if name in BOOTSTRAP_P:
            entry["accuracy"]["p_value"] = BOOTSTRAP_P[name][seed_index]
        entries.append(entry)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"systems": entries}, f)


def make_treebank(directory, seeds=(1, 2, 3), missing=()):
    """Runs of SYSTEMS for SEEDS, laid out as tagger-table2.sh does; (system, seed) in
    MISSING is left out of that seed's score files."""
    for index, seed in enumerate(seeds):
        for name, sub in SYSTEMS:
            write_run(os.path.join(directory, sub) if index == 0 else os.path.join(directory, sub, f"seed{seed}"),
                      TEST[name][index])
        for split in ("dev", "test"):
            suffix = "" if index == 0 else f".seed{seed}"
            write_scores(os.path.join(directory, f"{split}-scores{suffix}.json"), index, split,
                         [n for n, _ in SYSTEMS if (n, seed) not in missing])


def table(directory, seeds="1,2,3"):
    output = os.path.join(directory, "results.md")
    args = [sys.executable, SCRIPT, "--output", output, "--title", "T", "--setting", "S", "--seeds", seeds]
    for name, sub in SYSTEMS:
        args += ["--system", f"{name}={sub}"]
    result = subprocess.run(args + [f"LinES:{directory}"], capture_output=True, text=True)
    if result.returncode != 0:
        return result, ""
    with open(output, encoding="utf-8") as f:
        return result, f.read()


def rows_of(text):
    return {cells[1]: cells for cells in
            ([c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| LinES |"))}


class SeveralSeeds(unittest.TestCase):
    def test_rows_are_means_and_sds_and_holm_adjusted_tests(self):
        with tempfile.TemporaryDirectory() as directory:
            make_treebank(directory)
            result, text = table(directory)
            self.assertEqual(result.returncode, 0, result.stderr)
            rows = rows_of(text)
            self.assertEqual(list(rows), ["PE[add]", "Conv2d", "SAN"])
            for name, values in TEST.items():
                cells = rows[name]
                self.assertEqual(cells[2], "3")
                self.assertEqual(cells[10], f"{stats.mean(values):.2f} ± {stats.sample_sd(values):.2f}")
                dev = [v - 1 for v in values]
                self.assertEqual(cells[7], f"{stats.mean(dev):.2f} ± {stats.sample_sd(dev):.2f}")
                self.assertEqual(cells[4], "2, 2, 2")
                self.assertEqual(cells[15], "–")
            self.assertEqual(rows["PE[add]"][14], "89.38")  # Table 2d, LinES
            self.assertEqual(rows["Conv2d"][14], "93.56")
            self.assertEqual(rows["SAN"][14], "–")  # no SAN column on UD
            self.assertEqual(rows["PE[add]"][13], "–")
            # By hand: each p is max(largest bootstrap p, Welch's p); Holm over the two rows.
            raw = {n: max(max(BOOTSTRAP_P[n]), stats.welch_t_test(TEST["PE[add]"], TEST[n])[2]) for n in BOOTSTRAP_P}
            low, high = sorted(raw, key=raw.get)
            adjusted = {low: min(1.0, 2 * raw[low])}
            adjusted[high] = max(adjusted[low], raw[high])
            for name in raw:
                star = "*" if adjusted[name] < 0.05 else ""
                self.assertEqual(rows[name][13], f"{adjusted[name]:.3f}{star} ({raw[name]:.3f})")
            self.assertNotIn("different numbers of seeds", text)
            # The dev curve: the mean over seeds of each epoch.
            self.assertIn(f"| 2 | {stats.mean(TEST['PE[add]']):.2f} | {stats.mean(TEST['Conv2d']):.2f} | "
                          f"{stats.mean(TEST['SAN']):.2f} |", text)

    def test_different_numbers_of_seeds_are_said(self):
        with tempfile.TemporaryDirectory() as directory:
            make_treebank(directory, seeds=(1, 2), missing={("SAN", 2)})
            result, text = table(directory, "1,2")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("the systems have different numbers of seeds** (PE[add]: 2, Conv2d: 2, SAN: 1)", text)
            rows = rows_of(text)
            self.assertEqual(rows["SAN"][2], "1")
            self.assertEqual(rows["SAN"][13], "–")  # one seed: no test over seeds
            self.assertEqual(rows["SAN"][10], "89.00 ± 0.00")

    def test_one_seed_gives_each_bootstrap_p_and_its_holm_adjustment(self):
        with tempfile.TemporaryDirectory() as directory:
            make_treebank(directory, seeds=(5,))
            result, text = table(directory, "5")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertNotIn("| Seeds |", text)
            self.assertEqual(rows_of(text)["Conv2d"][9], "94.00")
            # 0.001 and 0.3: Holm doubles the smaller; the larger stays (never below it).
            self.assertIn("Conv2d vs PE[add] on test (all tokens), paired bootstrap p = 0.0010 (Holm-adjusted across "
                          "the 2 tested rows: 0.0020)", text)
            self.assertIn("SAN vs PE[add] on test (all tokens), paired bootstrap p = 0.3000 (Holm-adjusted across the 2 "
                          "tested rows: 0.3000)", text)

    def test_a_score_file_without_the_baseline_is_a_one_line_error(self):
        with tempfile.TemporaryDirectory() as directory:
            make_treebank(directory, seeds=(1, 2), missing={("PE[add]", 2)})
            result, _ = table(directory, "1,2")
            self.assertEqual(result.returncode, 1)
            self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
            self.assertIn("dev-scores.seed2.json: no system named 'PE[add]'", result.stderr)


if __name__ == "__main__":
    unittest.main()
