"""Scoring releases the GIL, and metrics used from several Python threads at once give
the same results as one thread."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from csan.metrics import BLEU, CHRF, TER, PairedTest
from sacrebleu_vectors import lines

HYPS = list(lines("de500", "sys_d.de", True))
REFS = list(lines("de500", "ref.de", True))


def test_scoring_releases_the_gil() -> None:
    """While one thread scores, another keeps running Python: if the GIL were held, the
    second thread would stall for the whole call."""
    metric = TER()
    hyps, refs = HYPS * 20, [REFS * 20]
    done = threading.Event()
    took = []

    def score() -> None:
        start = time.perf_counter()
        metric.corpus_score(hyps, refs)
        took.append(time.perf_counter() - start)
        done.set()

    worker = threading.Thread(target=score)
    last = time.perf_counter()
    longest_stall = 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest_stall = max(longest_stall, now - last)
        last = now
    worker.join()
    assert took[0] > 0.05, "the call is too short to tell"
    assert longest_stall < 0.5 * took[0], (longest_stall, took[0])


def test_threads_give_the_same_results() -> None:
    shared = {"BLEU": BLEU(), "chrF": CHRF(word_order=2), "TER": TER()}
    systems = ["sys_a.de", "sys_b.de", "sys_c.de", "sys_d.de"]
    work = [(name, s) for name in shared for s in systems] * 2

    def score(job):
        name, system = job
        return repr(shared[name].corpus_score(list(lines("de500", system, True)), [REFS], n_bootstrap=50))

    serial = [score(job) for job in work]
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(score, work))
    assert parallel == serial

    def paired(_):
        named = [(s, list(lines("de500", s, True))) for s in systems]
        _, scores = PairedTest(named, {"BLEU": BLEU()}, [REFS], "bs", 100)()
        return [repr(r) for r in scores["BLEU"]]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(paired, range(4)))
    assert all(r == results[0] for r in results)
