#!/usr/bin/python3
"""cmake/find-unused-torch-libraries.sh and the stand-ins csan's programs link.

1. The search on made-up libraries: a library that names three others, uses one of them, and
   one it does not use whose symbols a used one needs: only the truly unused one is replaced.
2. Each program given in CSAN_PROGRAMS: the loader binds every symbol (`ldd -r`), every stand-in
   in CSAN_STAND_INS (':'-separated; empty where the build found none) is the object loaded under
   its soname, and the program runs (--help).
Environment: CSAN_SOURCE_DIR, CSAN_CXX, CSAN_PROGRAMS, CSAN_STAND_INS.
"""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(os.environ["CSAN_SOURCE_DIR"])
CXX = os.environ.get("CSAN_CXX", "c++")
SCRIPT = SOURCE / "cmake" / "find-unused-torch-libraries.sh"
PROBLEMS = ("undefined symbol", "=> not found", "no version information")


def build_library(directory: Path, soname: str, code: str, needed=()) -> Path:
    path = directory / soname
    source = directory / (soname + ".cpp")
    source.write_text(code)
    links = [str(directory / n) for n in needed]
    subprocess.run([CXX, "-shared", "-fPIC", "-o", str(path), f"-Wl,-soname,{soname}", str(source),
                    "-Wl,--no-as-needed", *links, "-Wl,-z,now"], check=True)
    return path


def test_search_on_made_up_libraries() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        build_library(d, "libdeep.so.1", 'extern "C" int deep() { return 1; }')
        # libhelper uses libdeep; the main library does not use libdeep itself.
        build_library(d, "libhelper.so.1", 'extern "C" int deep(); extern "C" int helper() { return deep() + 1; }',
                      ["libdeep.so.1"])
        build_library(d, "libunused.so.2", 'extern "C" int unused() { return 3; }')
        build_library(d, "libnamedtoo.so.3", 'extern "C" int named_too() { return 4; }', ["libunused.so.2"])
        main = build_library(d, "libmain.so.1", 'extern "C" int helper(); extern "C" int entry() { return helper(); }',
                             ["libhelper.so.1", "libdeep.so.1", "libunused.so.2", "libnamedtoo.so.3"])
        env = dict(os.environ, LD_LIBRARY_PATH=str(d))
        out = d / "stand-ins"
        run = subprocess.run(["bash", str(SCRIPT), str(main), CXX, str(out)], env=env, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        found = sorted(Path(line).name for line in run.stdout.split())
        # libdeep is named by libmain and unused by it, but libhelper needs its symbol.
        assert found == ["libnamedtoo.so.3", "libunused.so.2"], found
        for name in found:
            assert (out / name).is_file(), name
        # With the stand-ins first on the path everything still binds.
        check = subprocess.run(["ldd", "-r", str(main)], env=dict(env, LD_LIBRARY_PATH=f"{out}:{d}"),
                               capture_output=True, text=True)
        assert not any(p in check.stdout + check.stderr for p in PROBLEMS), check.stdout + check.stderr
        # A library whose every needed library is used gets none, and the output folder is removed.
        lean = build_library(d, "liblean.so.1", 'extern "C" int helper(); extern "C" int lean() { return helper(); }',
                             ["libhelper.so.1"])
        run = subprocess.run(["bash", str(SCRIPT), str(lean), CXX, str(d / "none")], env=env,
                             capture_output=True, text=True)
        assert run.returncode == 0 and run.stdout.strip() == "", run.stdout + run.stderr
        assert not (d / "none").exists()


def test_programs_bind_and_load_the_stand_ins() -> None:
    programs = [p for p in os.environ.get("CSAN_PROGRAMS", "").split(":") if p]
    stand_ins = [Path(p) for p in os.environ.get("CSAN_STAND_INS", "").split(":") if p]
    assert programs, "CSAN_PROGRAMS is empty"
    for program in programs:
        report = subprocess.run(["ldd", "-r", program], capture_output=True, text=True)
        text = report.stdout + report.stderr
        bad = [line for line in text.splitlines() if any(p in line for p in PROBLEMS)]
        assert not bad, f"{program}: {bad[:3]}"
        loaded = {}
        for line in report.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "=>":
                loaded[parts[0]] = parts[2]
        for stand_in in stand_ins:
            assert os.path.realpath(loaded.get(stand_in.name, "")) == os.path.realpath(stand_in), \
                f"{program}: {stand_in.name} loads from {loaded.get(stand_in.name)}, not the stand-in"
        subprocess.run([program, "--help"], check=True, capture_output=True)


def test_benchmark_names_a_bad_argument() -> None:
    bench = SOURCE / "tools" / "bench" / "unused-torch-libraries.sh"
    with tempfile.TemporaryDirectory() as tmp:
        text = Path(tmp) / "in.txt"
        text.write_text("a b\n")
        cases = [([str(Path(tmp) / "none.txt"), str(text)], f"{tmp}/none.txt: cannot read"),
                 ([str(text)], "no CHECKPOINT"),
                 ([str(text), str(Path(tmp) / "none.pt")], f"{tmp}/none.pt: cannot read")]
        for args, message in cases:
            run = subprocess.run(["bash", str(bench), *args], capture_output=True, text=True,
                                 env=dict(os.environ, CSAN_BUILD_DIR=tmp))
            lines = run.stderr.strip().splitlines()
            assert run.returncode == 2 and len(lines) == 1 and message in lines[0], (args, run.stderr)
        # A build without stand-ins (another LibTorch, or the option off) is named, not measured.
        (Path(tmp) / "model.pt").write_text("x")
        run = subprocess.run(["bash", str(bench), str(text), str(Path(tmp) / "model.pt")], capture_output=True,
                             text=True, env=dict(os.environ, CSAN_BUILD_DIR=tmp))
        assert run.returncode == 2 and run.stderr.strip() == (
            f"unused-torch-libraries.sh: {tmp}/unused-torch-libraries: no stand-ins (this LibTorch gets none, "
            "or the option is off)"), run.stderr


if __name__ == "__main__":
    test_search_on_made_up_libraries()
    test_programs_bind_and_load_the_stand_ins()
    test_benchmark_names_a_bad_argument()
    print("ok")
