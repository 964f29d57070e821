"""tools/bench/ctranslate2 without CTranslate2: summarize.py reads bench-generate's report and
builds the table from made-up results (medians, each engine's faster layout, ratios against
the goals, each row's BLEU and identical lines from its own files), and run.sh names a bad
argument in one line. Runs as /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(SOURCE_DIR, "tools", "bench", "ctranslate2")
SUMMARIZE = os.path.join(BENCH, "summarize.py")

REPORT = """precision int8: 31 projection(s) per model in int8, int8 products: csan avx512-vnni
bench-generate: 1000 sentences, beam 5, batch 64, max_len 0*src+200, 2 threads
  fp32             1.00x fp32, 100.0% of sentences as fp32
  11.55 s  86.6 sentences/s  1301.6 target tokens/s (15036 tokens)
  int8             3.27x fp32, 87.6% of sentences as fp32
  3.53 s  283.0 sentences/s  4203.2 target tokens/s (14854 tokens)
"""

# A stand-in for csan-score: "BLEU" = the number of lines of the hypothesis file, so that a
# row showing another row's file shows another number.
FAKE_SCORE = """#!/bin/sh
while [ $# -gt 0 ]; do case $1 in -i) shift; wc -l < "$1"; exit 0;; esac; shift; done
exit 1
"""


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Ctranslate2Bench(unittest.TestCase):
    def test_parses_bench_generate_reports(self):
        with tempfile.TemporaryDirectory() as d:
            write(os.path.join(d, "r.txt"), REPORT)
            done = subprocess.run([sys.executable, SUMMARIZE, "--parse-bench", os.path.join(d, "r.txt"),
                                   "--layout", "pb1", "--round", "2"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            rows = [json.loads(line) for line in done.stdout.splitlines()]
            self.assertEqual(rows, [
                {"engine": "csan", "precision": "fp32", "layout": "pb1", "round": 2, "sent_per_s": 86.6,
                 "tgt_tok_per_s": 1301.6},
                {"engine": "csan", "precision": "int8", "layout": "pb1", "round": 2, "sent_per_s": 283.0,
                 "tgt_tok_per_s": 4203.2}])
            write(os.path.join(d, "bad.txt"), "bench-generate: error: no data\n")
            bad = subprocess.run([sys.executable, SUMMARIZE, "--parse-bench", os.path.join(d, "bad.txt"),
                                  "--layout", "x", "--round", "1"], capture_output=True, text=True)
            self.assertNotEqual(bad.returncode, 0)
            self.assertRegex(bad.stderr.strip(), r"^summarize.py: .*bad.txt: not a bench-generate report$")

    def test_table_takes_medians_and_each_engines_faster_layout(self):
        with tempfile.TemporaryDirectory() as work:
            rows = []
            for r, (c_def, c_pb1, k_intra, k_inter) in enumerate([(100, 90, 60, 70), (110, 80, 50, 75), (90, 95, 55, 80)]):
                for layout, v in (("default", c_def), ("pb1", c_pb1)):
                    rows.append({"engine": "csan", "precision": "fp32", "layout": layout, "round": r, "sent_per_s": v,
                                 "tgt_tok_per_s": 1})
                    rows.append({"engine": "csan", "precision": "int8", "layout": layout, "round": r,
                                 "sent_per_s": 3 * v, "tgt_tok_per_s": 1})
                for layout, v in (("intra", k_intra), ("inter", k_inter)):
                    rows.append({"engine": "ct2", "precision": "fp32", "layout": layout, "round": r, "sent_per_s": v,
                                 "tgt_tok_per_s": 1})
                    rows.append({"engine": "ct2", "precision": "int8", "layout": layout, "round": r,
                                 "sent_per_s": 2 * v, "tgt_tok_per_s": 1})
            # Peak RSS: three runs per engine and layout; fp32 two batches: csan 290, 300, 330 against
            # CT2 200, 210, 190; one batch: csan 250 against CT2 220 (one run each); int8 one layout only.
            for engine, layout, values in (("csan", "default", (290, 300, 330)), ("ct2", "inter", (200, 210, 190)),
                                           ("csan", "pb1", (250,)), ("ct2", "intra", (220,))):
                for run, v in enumerate(values, 1):
                    rows.append({"engine": engine, "precision": "fp32", "layout": layout, "run": run, "rss_kib": v * 1024})
            rows += [{"engine": "csan", "precision": "int8", "layout": "pb1", "run": 1, "rss_kib": 240 * 1024},
                     {"engine": "ct2", "precision": "int8", "layout": "intra", "run": 1, "rss_kib": 200 * 1024},
                     {"engine": "csan", "precision": "floor", "rss_kib": 97 * 1024},
                     {"engine": "ct2", "precision": "floor", "rss_kib": 53 * 1024}]
            write(os.path.join(work, "results.jsonl"), "".join(json.dumps(r) + "\n" for r in rows))
            os.makedirs(os.path.join(work, "hyp"))
            os.makedirs(os.path.join(work, "logs"))
            write(os.path.join(work, "logs", "ct2-backends.txt"),
                  "[2026-11-29 01:00:00.000] [ctranslate2] [thread 7] [info]  - SGEMM backend: DNNL (packed: false)\n"
                  "[2026-11-29 01:00:00.000] [ctranslate2] [thread 7] [info]  - GEMM_S8 backend: DNNL (packed: false, "
                  "u8s8 preferred: true)\n")
            write(os.path.join(work, "hyp", "csan.fp32.txt"), "a\nb\nc\n")
            write(os.path.join(work, "hyp", "ct2.fp32.txt"), "a\nx\nc\n")
            write(os.path.join(work, "hyp", "csan.int8.txt"), "a\nb\nc\nd\n")
            write(os.path.join(work, "hyp", "ct2.int8.txt"), "a\nb\nc\nd\n")
            score = os.path.join(work, "score")
            write(score, FAKE_SCORE)
            os.chmod(score, 0o755)
            done = subprocess.run([sys.executable, SUMMARIZE, "--work", work, "--reference", "ref", "--score", score],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            speed = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
                     for line in done.stdout.splitlines()
                     if (line.startswith("| fp32") or line.startswith("| int8")) and line.count("|") == 10}
            # fp32: csan medians 100 (default) and 90 (pb1); CT2 55 (intra) and 75 (inter):
            # 100 / 75 = 1.33x, goal 1.3x met.
            self.assertEqual(speed["fp32"], ["100.0", "90.0", "55.0", "75.0", "1.33x", "1.3x met", "3.0 / 3.0", "2/3"])
            # int8: 300 / 150 = 2.00x, met; four lines each, all identical.
            self.assertEqual(speed["int8"], ["300.0", "270.0", "110.0", "150.0", "2.00x", "1.5x met", "4.0 / 4.0", "4/4"])
            memory = [[c.strip() for c in line.split("|")[1:-1]] for line in done.stdout.splitlines()
                      if (line.startswith("| fp32") or line.startswith("| int8")) and line.count("|") == 7]
            # Medians of the runs: 300 / 200 = 1.50x (not met); 250 / 220 = 1.14x (met); int8 only
            # in the layout it was measured in: 240 / 200 = 1.20x.
            self.assertEqual(memory, [
                ["fp32", "one batch per thread (csan default, CT2 inter)", "300 (290-330)", "200 (190-210)", "1.50x",
                 "1.25x not met"],
                ["fp32", "one batch on all threads (csan pb1, CT2 intra)", "250", "220", "1.14x", "1.25x met"],
                ["int8", "one batch on all threads (csan pb1, CT2 intra)", "240", "200", "1.20x", "1.25x met"]])
            self.assertIn("`csan-generate --help` 97 MiB; Python with ctranslate2 and sentencepiece imported 53 MiB",
                          done.stdout)
            # CTranslate2's own log of its backends, without the log prefix.
            self.assertIn("```\n - SGEMM backend: DNNL (packed: false)\n - GEMM_S8 backend: DNNL (packed: false, "
                          "u8s8 preferred: true)\n```", done.stdout)

    def test_run_names_a_bad_argument(self):
        run = os.path.join(BENCH, "run.sh")
        with tempfile.TemporaryDirectory() as d:
            missing = subprocess.run(["bash", run, os.path.join(d, "none.pt"), d, d + "/test", d + "/work"],
                                     capture_output=True, text=True)
            self.assertEqual(missing.returncode, 2)
            self.assertEqual(missing.stderr.strip(), f"run.sh: {d}/none.pt: cannot read")
            backend = subprocess.run(["bash", run, os.path.join(d, "none.pt"), d, d + "/test", d + "/work"],
                                     capture_output=True, text=True, env={**os.environ, "CT2_BACKEND": "blas"})
            self.assertEqual(backend.returncode, 2)
            self.assertEqual(backend.stderr.strip(), "run.sh: CT2_BACKEND=blas: expected auto or mkl")
            write(os.path.join(d, "model.pt"), "x")
            no_data = subprocess.run(["bash", run, os.path.join(d, "model.pt"), d, d + "/test", d + "/work"],
                                     capture_output=True, text=True)
            self.assertEqual(no_data.stderr.strip(), f"run.sh: {d}: no preprocess.json (not a csan-preprocess folder)")
            write(os.path.join(d, "preprocess.json"), "{}")
            no_ct2 = subprocess.run(["bash", run, os.path.join(d, "model.pt"), d, d + "/test", d + "/work"],
                                    capture_output=True, text=True, env={**os.environ, "CT2_PREFIX": d + "/ct2"})
            self.assertEqual(no_ct2.returncode, 2)
            self.assertEqual(no_ct2.stderr.strip(),
                             f"run.sh: {d}/ct2: no CTranslate2 build (run tools/bench/ctranslate2/build.sh)")


if __name__ == "__main__":
    unittest.main()
