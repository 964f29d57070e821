#!/usr/bin/python3
"""csan beside torch and sentencepiece in one Python process (run by ctest).

Debian's python3-torch and a shared module built from the csan library (interop_module.cpp,
loaded with ctypes) must share a process in either order, also with Debian's
`import sentencepiece` (whose libsentencepiece.so bundles its own protobuf), and each call
tokenizes with SentencePiece, runs a LibTorch op and scores BLEU. Every scenario runs in a
fresh interpreter, so that a crash at load time (the protobuf clash aborted processes
before) shows as that scenario's failure.

    python_interop_test.py MODULE    (CSAN_SHARED_DIR: the shared data folder)

Exits 77 (ctest's skip) when /usr/bin/python3 has no torch: tools/install-deps.sh installs
python3-torch and python3-sentencepiece.
"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
SENTENCE = "Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt."

# Each scenario's steps, run in order in one interpreter.
SCENARIOS = {
    "torch, then csan": ["torch", "csan", "torch_op"],
    "csan, then torch": ["csan", "torch", "torch_op", "csan"],
    "sentencepiece, torch, then csan": ["sentencepiece", "torch", "csan", "compare_pieces"],
    "csan, then sentencepiece and torch": ["csan", "sentencepiece", "compare_pieces", "torch", "torch_op"],
}

CHILD = r'''
import ctypes, json, sys
module_path, model_path, sentence, steps = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
state = {}

def csan():
    module = state.get("module") or ctypes.CDLL(module_path)
    state["module"] = module
    out = ctypes.create_string_buffer(1 << 16)
    module.csan_interop_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    status = module.csan_interop_run(model_path.encode(), sentence.encode(), out, len(out))
    if status != 0:
        raise SystemExit("csan_interop_run failed: " + out.value.decode())
    state["result"] = json.loads(out.value.decode())

def torch():
    import torch as t
    state["torch"] = t

def torch_op():
    t = state["torch"]
    ids = state["result"]["ids"]
    assert t.tensor(ids).sum().item() == state["result"]["torch_sum"], "LibTorch's sum differs from torch's"
    assert t.nn.functional.linear(t.ones(1, 3), t.eye(3)).sum().item() == 3.0

def sentencepiece():
    import sentencepiece as spm
    state["spm"] = spm.SentencePieceProcessor(model_file=model_path)

def compare_pieces():
    pieces = state["spm"].encode(sentence, out_type=str)
    assert pieces == state["result"]["pieces"], (pieces, state["result"]["pieces"])

for step in steps:
    globals()[step]()
print(json.dumps(state["result"]))
'''


def run_child(module, model, steps):
    return subprocess.run([sys.executable, "-c", CHILD, module, model, SENTENCE, ",".join(steps)],
                          capture_output=True, text=True, timeout=240)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python_interop_test.py MODULE")
    module = os.path.abspath(sys.argv[1])
    try:
        import torch  # noqa: F401
    except ImportError:
        print("SKIP: /usr/bin/python3 has no torch (apt-get install python3-torch, or tools/install-deps.sh)")
        sys.exit(SKIP)
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        sys.exit("FAIL: /usr/bin/python3 has no sentencepiece (apt-get install python3-sentencepiece, "
                 "or tools/install-deps.sh)")

    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "de.model")
        corpus = os.path.join(os.environ["CSAN_SHARED_DIR"], "vectors/sacrebleu/cases/de500/ref.de")
        trainer = subprocess.run([sys.executable, "-c",
                                  "import ctypes, sys\n"
                                  "m = ctypes.CDLL(sys.argv[1])\n"
                                  "out = ctypes.create_string_buffer(4096)\n"
                                  "s = m.csan_interop_train(sys.argv[2].encode(), sys.argv[3].encode(), 300, out, 4096)\n"
                                  "sys.exit(out.value.decode() if s else 0)\n", module, corpus, model],
                                 capture_output=True, text=True, timeout=240)
        if trainer.returncode != 0:
            sys.exit("FAIL: training the model through the module: " + trainer.stderr.strip())

        for name, steps in SCENARIOS.items():
            child = run_child(module, model, steps)
            if child.returncode != 0:
                failures += 1
                print(f"FAIL {name}: exit {child.returncode}\n{child.stderr.strip()[-2000:]}")
                continue
            result = json.loads(child.stdout.strip().splitlines()[-1])
            problems = []
            if result["decoded"] != SENTENCE:
                problems.append(f"decoded {result['decoded']!r}")
            if abs(result["bleu"] - 100.0) > 1e-9:
                problems.append(f"BLEU {result['bleu']}")
            if result["torch_sum"] != sum(result["ids"]) or len(result["ids"]) != len(result["pieces"]):
                problems.append("LibTorch's sum or the ids are wrong")
            if not result["pieces"][0].startswith("\u2581"):
                problems.append(f"pieces {result['pieces']}")
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "; ".join(problems))
            else:
                print(f"ok {name}: {len(result['pieces'])} pieces, BLEU {result['bleu']}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
