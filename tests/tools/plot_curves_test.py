"""tools/plot-curves end to end (run as /usr/bin/python3, like the tool). Input checks and
the reading of metrics.jsonl need no matplotlib; the pictures are checked when Debian's
python3-matplotlib is installed (tools/install-deps.sh --plots) and skipped otherwise."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(SOURCE_DIR, "tools", "plot-curves")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
from plotting import PlotError, training_log  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAVE_MATPLOTLIB = True
except ImportError:
    HAVE_MATPLOTLIB = False
needs_matplotlib = unittest.skipUnless(HAVE_MATPLOTLIB, "python3-matplotlib is not installed "
                                       "(tools/install-deps.sh --plots)")


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def train(update, loss, wall, epoch=1, **extra):
    return dict(kind="train", epoch=epoch, update=update, loss=loss, nll_loss=loss - 0.2, ppl=2 ** loss,
                lr=1e-3, gnorm=1.0, wps=1000.0, ups=10.0, skipped=0, wall=wall, **extra)


def valid(update, loss, wall, epoch=1, **extra):
    return dict(kind="valid", epoch=epoch, update=update, loss=loss, nll_loss=loss - 0.2, ppl=2 ** loss,
                best_loss=loss, wall=wall, **extra)


class PlotCurvesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def save_dir(self, name, records=None, text=None):
        path = os.path.join(self.dir, name)
        os.makedirs(path, exist_ok=True)
        if records is not None:
            text = "".join(json.dumps(r) + "\n" for r in records)
        if text is not None:
            with open(os.path.join(path, "metrics.jsonl"), "w") as f:
                f.write(text)
        return path

    def run_tool(self, *args):
        return subprocess.run(["/usr/bin/python3", TOOL, *args], capture_output=True, text=True)

    def assert_one_line_error(self, result, *fragments):
        self.assertEqual(result.returncode, 1, result.stderr)
        lines = result.stderr.strip().split("\n")
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("plot-curves: error: "), lines[0])
        for fragment in fragments:
            self.assertIn(fragment, lines[0])

    def a_run(self, name="run", **extra):
        return self.save_dir(name, [train(10, 8.0, 1.0, **extra), valid(10, 7.0, 1.5, bleu=1.0, **extra),
                                    train(20, 6.0, 2.0, epoch=2, **extra),
                                    valid(20, 5.5, 2.5, epoch=2, bleu=4.0, **extra)])

    # ---- bad inputs: one line naming the file, line or option; exit 1 -----------------

    def test_save_dir_without_metrics(self):
        empty = self.save_dir("empty")
        self.assert_one_line_error(self.run_tool(empty, "-o", os.path.join(self.dir, "c.png")),
                                   empty, "no metrics.jsonl")

    def test_missing_save_dir(self):
        missing = os.path.join(self.dir, "nope")
        self.assert_one_line_error(self.run_tool(missing, "-o", os.path.join(self.dir, "c.png")),
                                   missing, "no such save directory")

    def test_empty_metrics(self):
        run = self.save_dir("run", text="")
        self.assert_one_line_error(self.run_tool(run, "-o", os.path.join(self.dir, "c.png")),
                                   os.path.join(run, "metrics.jsonl"), "empty")

    def test_malformed_line_is_named(self):
        good = json.dumps(train(10, 8.0, 1.0))
        run = self.save_dir("run", text=f"{good}\n{good}\n{{\"kind\": \"train\", \"upd\n")
        self.assert_one_line_error(self.run_tool(run, "-o", os.path.join(self.dir, "c.png")),
                                   os.path.join(run, "metrics.jsonl") + ":3:", "malformed JSON")

    def test_record_without_a_number_is_named(self):
        run = self.save_dir("run", [train(10, 8.0, 1.0), dict(train(20, 7.0, 2.0), loss="x")])
        self.assert_one_line_error(self.run_tool(run, "-o", os.path.join(self.dir, "c.png")),
                                   "metrics.jsonl:2:", "'loss' is not a number")

    def test_runs_of_different_tasks_are_refused(self):
        translation = self.a_run("translation")
        tagging = self.save_dir("tagging", [train(10, 2.0, 1.0, task="tagging"),
                                            valid(10, 1.5, 1.5, task="tagging", accuracy=91.0)])
        self.assert_one_line_error(self.run_tool(translation, tagging, "-o", os.path.join(self.dir, "c.png")),
                                   os.path.join(tagging, "metrics.jsonl"), "task 'tagging' differs from 'translation'")

    def test_tasks_mixed_in_one_file_are_refused(self):
        run = self.save_dir("run", [train(10, 8.0, 1.0), valid(10, 7.0, 1.5, task="tagging")])
        self.assert_one_line_error(self.run_tool(run, "-o", os.path.join(self.dir, "c.png")),
                                   "metrics.jsonl:2:", "task 'tagging'")

    def test_unknown_output_format(self):
        self.assert_one_line_error(self.run_tool(self.a_run(), "-o", os.path.join(self.dir, "c.jpg")),
                                   "--output", "c.jpg", "'.jpg'")

    def test_output_in_a_missing_directory(self):
        out = os.path.join(self.dir, "no", "such", "c.png")
        self.assert_one_line_error(self.run_tool(self.a_run(), "-o", out), out, "does not exist")

    def test_label_count_must_match(self):
        self.assert_one_line_error(self.run_tool(self.a_run(), "--label", "a", "--label", "b", "-o",
                                                 os.path.join(self.dir, "c.png")), "--label given 2 times")

    def test_missing_metric_is_named(self):
        self.assert_one_line_error(self.run_tool(self.a_run(), "--metric", "chrf", "-o",
                                                 os.path.join(self.dir, "c.png")), "--metric chrf")

    def test_paired_bs_that_is_not_paired_bs_output(self):
        path = os.path.join(self.dir, "score.json")
        with open(path, "w") as f:
            json.dump({"name": "BLEU", "score": 30.0}, f)  # csan-score without --paired-bs
        self.assert_one_line_error(self.run_tool("--paired-bs", path, "-o", os.path.join(self.dir, "b.png")),
                                   path, "--paired-bs")

    def test_bad_option_is_one_line(self):
        self.assert_one_line_error(self.run_tool(self.a_run(), "--x", "steps", "-o", os.path.join(self.dir, "c.png")),
                                   "--x")

    # ---- reading: resumed runs, epochs ------------------------------------------------

    def test_a_resumed_run_keeps_the_later_records_and_continues_wall_time(self):
        # Checkpoint at update 20; the first process logged up to 40 and was killed; the
        # resumed process (wall restarts at 0) logs 30 and 40 again.
        run = self.save_dir("run", [train(10, 8.0, 1.0), train(20, 7.0, 2.0), valid(20, 6.8, 2.5),
                                    train(30, 6.0, 3.0), valid(30, 5.9, 3.5), train(40, 5.0, 4.0),
                                    train(30, 6.5, 1.0), valid(30, 6.2, 1.5), train(40, 5.5, 2.0)])
        records = training_log.read_run(run, "r").records
        self.assertEqual([(r.kind, r.update) for r in records],
                         [("train", 10), ("train", 20), ("valid", 20), ("train", 30), ("valid", 30), ("train", 40)])
        self.assertEqual([r.data["loss"] for r in records if r.update >= 30], [6.5, 6.2, 5.5])
        self.assertEqual([r.wall for r in records], [1.0, 2.0, 2.5, 3.5, 4.0, 4.5])

    def test_fractional_epochs_put_end_of_epoch_validations_on_whole_epochs(self):
        run = training_log.read_run(self.save_dir("run", [
            train(10, 8.0, 1, epoch=1), valid(30, 7.0, 2, epoch=1), train(40, 6.0, 3, epoch=2),
            valid(60, 5.0, 4, epoch=2), train(75, 4.0, 5, epoch=3)]), "r")
        x = training_log.fractional_epochs(run)
        self.assertEqual([round(x[id(r)], 3) for r in run.records], [0.333, 1.0, 1.333, 2.0, 2.5])

    def test_default_labels_tell_apart_directories_of_the_same_name(self):
        self.assertEqual(training_log.default_labels(["a/x/ckpt", "a/y/ckpt"]), ["x/ckpt", "y/ckpt"])
        self.assertEqual(training_log.default_labels(["runs/transformer"]), ["transformer"])

    # ---- pictures ----------------------------------------------------------------------

    @needs_matplotlib
    def test_curves_png_for_every_x_axis(self):
        runs = [self.a_run("transformer"), self.a_run("csan2d")]
        for x in ("update", "epoch", "wall"):
            out = os.path.join(self.dir, f"curves-{x}.png")
            result = self.run_tool(*runs, "--x", x, "-o", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    @needs_matplotlib
    def test_curves_svg_has_titles_axes_and_labels(self):
        out = os.path.join(self.dir, "curves.svg")
        result = self.run_tool(self.a_run("transformer"), self.a_run("csan2d"), "--label", "Transformer",
                               "--label", "CSAN-2D", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        svg = slurp(out)
        for text in ("training loss", "validation loss", "validation BLEU", "loss (bits/token)", "updates",
                     "Transformer", "CSAN-2D"):
            self.assertIn(text, svg)

    @needs_matplotlib
    def test_tagging_runs_plot_accuracy(self):
        run = self.save_dir("tagger", [train(10, 2.0, 1.0, task="tagging"),
                                       valid(10, 1.5, 1.5, task="tagging", accuracy=91.0, best_accuracy=91.0)])
        out = os.path.join(self.dir, "tagger.svg")
        result = self.run_tool(run, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("validation accuracy", slurp(out))

    @needs_matplotlib
    def test_significance_bars_from_csan_score_json(self):
        path = os.path.join(self.dir, "sig.json")
        scores = lambda s, p: {"score": s, "p_value": p, "mean": s + 0.1, "ci": 0.8}  # noqa: E731
        with open(path, "w") as f:
            json.dump([{"system": "Baseline: out/transformer", "BLEU": scores(35.0, None), "chrF2": scores(60.0, None)},
                       {"system": "out/csan2d", "BLEU": scores(35.9, 0.02), "chrF2": scores(60.4, 0.2)}], f)
        out = os.path.join(self.dir, "sig.svg")
        result = self.run_tool("--paired-bs", path, "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        svg = slurp(out)
        for text in ("transformer", "(baseline)", "csan2d", "p = 0.020 *", "p = 0.200", "BLEU", "chrF2"):
            self.assertIn(text, svg)

    @needs_matplotlib
    def test_a_failed_write_keeps_the_previous_picture(self):
        out = os.path.join(self.dir, "c.png")
        self.assertEqual(self.run_tool(self.a_run(), "-o", out).returncode, 0)
        before = slurp(out, "rb")
        broken = self.save_dir("broken", text="{not json\n")
        self.assertEqual(self.run_tool(broken, "-o", out).returncode, 1)
        self.assertEqual(slurp(out, "rb"), before)
        as_dir = os.path.join(self.dir, "taken.png")
        os.makedirs(as_dir)
        self.assert_one_line_error(self.run_tool(self.a_run(), "-o", as_dir), as_dir, "cannot write")
        self.assertEqual([n for n in os.listdir(self.dir) if ".tmp." in n], [])


if __name__ == "__main__":
    unittest.main()
