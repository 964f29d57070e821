"""tools/bench/trace-summary on hand-made traces whose self times are known exactly, and its
one-line errors. (tests/cli/bench_profile_test.cpp runs it on a real bench-train trace.)"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(SOURCE_DIR, "tools", "bench", "trace-summary")


def op(name, ts, dur, tid=1):
    return {"name": name, "ph": "X", "ts": ts, "dur": dur, "tid": tid, "pid": "CPU Functions", "args": {}}


class TraceSummaryTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, content, name="trace.json"):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)

    def summary(self, events, *args):
        r = self.run_tool(self.write(events), "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_self_time_is_the_time_not_spent_in_the_ops_called(self):
        # Thread 1 spans 0..1000 us: linear (0..400) calls matmul (10..390) which calls mm
        # (20..380); layer_norm (500..600) calls native_layer_norm (500..600, same bounds);
        # nothing recorded in 400..500 and 600..1000. Events come unsorted, as LibTorch
        # writes them (a parent after its children).
        events = [
            op("aten::mm", 20, 360), op("aten::matmul", 10, 380), op("aten::linear", 0, 400),
            op("aten::native_layer_norm", 500, 100), op("aten::layer_norm", 500, 100),
            op("aten::add_", 990, 10),
        ]
        s = self.summary(events)
        self.assertAlmostEqual(s["thread_ms"], 1.0)
        self.assertEqual(s["threads"], 1)
        self.assertAlmostEqual(s["products_ms"], 0.36)
        self.assertAlmostEqual(s["products_share"], 0.36)
        ops = {o["name"]: o for o in s["ops"]}
        self.assertAlmostEqual(ops["aten::matmul"]["self_ms"], 0.02)
        self.assertAlmostEqual(ops["aten::linear"]["self_ms"], 0.02)
        # Equal bounds: the one written last (LibTorch writes an op as it ends) is the caller.
        self.assertAlmostEqual(ops["aten::native_layer_norm"]["self_ms"], 0.1)
        self.assertAlmostEqual(ops["aten::layer_norm"]["self_ms"], 0.0)
        self.assertAlmostEqual(s["other_ops_ms"], 0.04 + 0.1 + 0.01)
        self.assertAlmostEqual(s["outside_ops_ms"], 1.0 - 0.4 - 0.1 - 0.01)
        self.assertAlmostEqual(s["products_share"] + s["other_ops_share"] + s["outside_ops_share"], 1.0)
        self.assertEqual(s["ops"][0]["name"], "aten::mm")
        self.assertEqual(ops["aten::mm"]["calls"], 1)

    def test_every_precisions_products_count_and_each_thread_adds_its_own_span(self):
        events = [
            op("quantized::linear_dynamic", 0, 50), op("aten::addmm", 100, 30), op("aten::bmm", 200, 20),
            op("aten::mul", 300, 100),
            # A second thread translating at the same time (csan-generate's parallel
            # batches): 1,000 us of its own, 600 of them in a product.
            op("aten::mm", 50, 600, tid=2), op("aten::add", 1040, 10, tid=2),
        ]
        s = self.summary(events)
        self.assertEqual(s["threads"], 2)
        self.assertAlmostEqual(s["thread_ms"], 0.4 + 1.0)
        self.assertAlmostEqual(s["longest_thread_ms"], 1.0)
        self.assertAlmostEqual(s["products_ms"], 0.05 + 0.03 + 0.02 + 0.6)
        self.assertAlmostEqual(s["products_share"], 0.7 / 1.4)
        self.assertAlmostEqual(s["outside_ops_ms"], (0.4 - 0.2) + (1.0 - 0.61))
        self.assertAlmostEqual(s["products_share"] + s["other_ops_share"] + s["outside_ops_share"], 1.0)
        self.assertEqual(s["ops"][0]["name"], "aten::mm")

    def test_top_limits_the_ops_listed_and_the_text_report_names_the_shares(self):
        events = [op(f"aten::op{i}", 10 * i, 5) for i in range(6)]
        self.assertEqual(len(self.summary(events, "--top", "3")["ops"]), 3)
        r = self.run_tool(self.write(events))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("matrix products", r.stdout)
        self.assertIn("outside recorded ops", r.stdout)
        self.assertIn("aten::op0", r.stdout)

    def test_a_trace_event_object_with_trace_events_inside_is_read_too(self):
        s = self.summary({"traceEvents": [op("aten::mm", 0, 10), {"ph": "M", "name": "process_name"}]})
        self.assertAlmostEqual(s["products_share"], 1.0)

    def test_bad_inputs_are_one_line_errors_naming_the_file(self):
        cases = {
            "missing": (None, "cannot read"),
            "garbage": ("not json", "not a JSON trace"),
            "object": ('{"a": 1}', "no list of trace events"),
            "empty": ("[]", "nothing was profiled"),
            "no-dur": ('[{"name": "aten::mm", "ph": "X", "ts": 1}]', "event 0: a complete event needs"),
            "zero": ('[{"name": "aten::mm", "ph": "X", "ts": 1, "dur": 0}]', "take no time"),
        }
        for name, (content, message) in cases.items():
            path = os.path.join(self.dir.name, name) if content is None else self.write(content, name)
            r = self.run_tool(path)
            self.assertEqual(r.returncode, 2, name)
            self.assertEqual(r.stdout, "", name)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(path, r.stderr)
            self.assertIn(message, r.stderr)
        r = self.run_tool(self.write([op("aten::mm", 0, 1)]), "--top", "0")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--top must be at least 1", r.stderr)


if __name__ == "__main__":
    unittest.main()
