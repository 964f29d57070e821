"""tools/bench/compile-cost on two made-up build folders: it runs exactly the chosen
translation units' commands (each writes its output where the tool points -o), counts them,
and names what is wrong in one line. Runs as /usr/bin/python3; compiles nothing real."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE_DIR = os.environ.get("CSAN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(SOURCE_DIR, "tools", "bench", "compile-cost")


def build_folder(root, name, objects):
    """A folder whose compile_commands.json 'compiles' each object by creating its -o file."""
    folder = os.path.join(root, name)
    os.makedirs(folder)
    entries = [{"directory": folder, "file": o + ".cpp", "command": f"/bin/sh -c 'touch \"$2\"' - -o {o}"}
               for o in objects]
    # Outside the default targets: never compiled.
    entries.append({"directory": folder, "file": "n.cpp", "command": "/bin/false -o CMakeFiles/csan_nn.dir/n.o"})
    json.dump(entries, open(os.path.join(folder, "compile_commands.json"), "w"))
    return folder


def run(*args):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)


class CompileCost(unittest.TestCase):
    def test_counts_the_chosen_units_of_each_folder(self):
        with tempfile.TemporaryDirectory() as root:
            old = build_folder(root, "old", ["CMakeFiles/csan_core.dir/a.o", "CMakeFiles/csan_core.dir/b.o",
                                             "tests/CMakeFiles/test_cli_train.dir/c.o"])
            new = build_folder(root, "new", ["CMakeFiles/csan_core.dir/Unity/unity_0.o"])
            done = run(old, new, "--jobs", "2")
            self.assertEqual(done.returncode, 0, done.stderr)
            lines = done.stdout.splitlines()
            self.assertRegex(lines[0], r"^.*/old: 3 translation units, \d+ s of CPU$")
            self.assertRegex(lines[1], r"^.*/new: 1 translation units, \d+ s of CPU$")
            self.assertRegex(lines[2], r"^new / old: ")
            # The folders' own objects are not written: -o pointed elsewhere.
            self.assertFalse(os.path.exists(os.path.join(old, "CMakeFiles")))

    def test_bad_folders_and_failing_commands_are_one_line_errors(self):
        with tempfile.TemporaryDirectory() as root:
            good = build_folder(root, "good", ["CMakeFiles/csan_core.dir/a.o"])
            missing = run(os.path.join(root, "none"), good)
            self.assertNotEqual(missing.returncode, 0)
            self.assertRegex(missing.stderr.strip(), r"^compile-cost: .*none/compile_commands.json: ")
            nothing = run(good, good, "--targets", "no_such_target")
            self.assertNotEqual(nothing.returncode, 0)
            self.assertIn("no translation unit of a target matching 'no_such_target'", nothing.stderr)
            failing = run(good, good, "--targets", "csan_nn")
            self.assertNotEqual(failing.returncode, 0)
            self.assertIn("compile-cost: failed: /bin/false", failing.stderr)
            jobs = run(good, good, "--jobs", "0")
            self.assertEqual(jobs.stderr.strip(), "compile-cost: --jobs must be at least 1")


if __name__ == "__main__":
    unittest.main()
