#!/usr/bin/python3
"""tools/bench/openblas-core.sh: each bad argument is a one-line error naming it (exit 2)."""
import os
import subprocess
import tempfile
from pathlib import Path

BENCH = Path(os.environ["CSAN_SOURCE_DIR"]) / "tools" / "bench" / "openblas-core.sh"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "model.pt").write_text("x")
        (d / "data").mkdir()
        cases = [([str(d / "none.pt"), str(d / "data")], f"openblas-core.sh: {d}/none.pt: cannot read"),
                 ([str(d / "model.pt"), str(d / "data")],
                  f"openblas-core.sh: {d}/data: no preprocess.json (not a csan-preprocess folder)")]
        (d / "with" / "data").mkdir(parents=True)
        (d / "with" / "data" / "preprocess.json").write_text("{}")
        cases.append(([str(d / "model.pt"), str(d / "with" / "data"), str(d / "none.yaml")],
                      f"openblas-core.sh: {d}/none.yaml: cannot read"))
        for args, message in cases:
            run = subprocess.run(["bash", str(BENCH), *args], capture_output=True, text=True)
            assert run.returncode == 2 and run.stderr.strip() == message, (args, run.returncode, run.stderr)
    print("ok")


if __name__ == "__main__":
    main()
