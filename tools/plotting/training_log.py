"""Reads a csan-train save directory's metrics.jsonl into one run's curves.

metrics.jsonl (toolkit/training/train_log.cpp) holds one JSON object per line: "kind":
"train" every log interval (epoch, update, loss, nll_loss, ppl, lr, gnorm, wps, ups, wall,
...) and "kind": "valid" after every validation (epoch, update, loss, nll_loss, ppl, the
checkpoint metric and best_<metric>, bleu with --eval-bleu, wall). Losses are in bits per
target token, as in fairseq. "wall" counts seconds since the process started.

A resumed run appends to the same file: the interrupted process may have logged updates
after its last checkpoint, which the resumed process logs again. Like TensorBoard, a later
record wins: a record drops the earlier ones of its kind at the same or a later update,
and a restart (wall going back) drops the earlier records of every kind from the restart's
first update on. Wall time continues across restarts from the last record kept.
"""
import json
import math
import os

from . import PlotError

DEFAULT_TASK = "translation"  # records written before records carried their task
KINDS = ("train", "valid")


class Record:
    def __init__(self, data, line):
        self.data = data
        self.line = line
        self.kind = data["kind"]
        self.update = data["update"]
        self.epoch = data.get("epoch")
        self.wall = None  # seconds of training so far, across restarts


class Run:
    """One save directory's records, after resolving restarts."""

    def __init__(self, path, label, task, records):
        self.path = path  # the metrics.jsonl file
        self.label = label
        self.task = task
        self.records = records

    def of_kind(self, kind):
        return [r for r in self.records if r.kind == kind]


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _parse(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError as e:
        raise PlotError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    records, task = [], None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise PlotError(f"{where}: malformed JSON record: {e.msg} (column {e.colno})") from None
        if not isinstance(data, dict):
            raise PlotError(f"{where}: a record must be a JSON object")
        record_task = data.get("task", DEFAULT_TASK)
        if task is None:
            task = record_task
        elif record_task != task:
            raise PlotError(f"{where}: task '{record_task}' differs from '{task}' earlier in the file")
        if data.get("kind") not in KINDS:
            continue  # other kinds of records (run information, ...) are not curves
        for key in ("update", "loss", "wall"):
            if key not in data:
                raise PlotError(f"{where}: {data['kind']} record without '{key}'")
            if not _number(data[key]):
                raise PlotError(f"{where}: '{key}' is not a number: {json.dumps(data[key])}")
        if "epoch" in data and not isinstance(data["epoch"], int):
            raise PlotError(f"{where}: 'epoch' is not an integer: {json.dumps(data['epoch'])}")
        records.append(Record(data, number))
    if not records:
        raise PlotError(f"{path}: no train or valid records (empty log)")
    return task or DEFAULT_TASK, records


def _resolve_restarts(records):
    kept = []
    offset, last_raw_wall = 0.0, None
    for r in records:
        raw = float(r.data["wall"])
        if last_raw_wall is not None and raw < last_raw_wall:  # a new process: resumed
            kept = [k for k in kept if k.update < r.update]
            offset = max((k.wall for k in kept), default=0.0)
        kept = [k for k in kept if k.kind != r.kind or k.update < r.update]
        last_raw_wall = raw
        r.wall = offset + raw
        kept.append(r)
    return kept


def default_labels(save_dirs):
    """Each directory's name; the last two path components (or the paths as given) where
    names repeat, as in exp1/ckpt and exp2/ckpt."""
    paths = [os.path.normpath(os.path.abspath(d)) for d in save_dirs]
    for parts in (1, 2):
        labels = [os.path.join(*p.split(os.sep)[-parts:]) for p in paths]
        if len(set(labels)) == len(labels):
            return labels
    return list(save_dirs)


def read_run(save_dir, label):
    if not os.path.isdir(save_dir):
        raise PlotError(f"{save_dir}: no such save directory")
    path = os.path.join(save_dir, "metrics.jsonl")
    if not os.path.isfile(path):
        raise PlotError(f"{save_dir}: no metrics.jsonl (not a csan-train save directory, or nothing logged yet)")
    task, records = _parse(path)
    return Run(path, label, task, _resolve_restarts(records))


def check_same_task(runs):
    first = runs[0]
    for run in runs[1:]:
        if run.task != first.task:
            raise PlotError(f"{run.path}: task '{run.task}' differs from '{first.task}' of {first.path}; "
                            "plot runs of one task together")


def fractional_epochs(run):
    """x = epoch - 1 + the fraction of that epoch's updates done, so that a validation at
    the end of epoch e sits at e. An epoch's length is the last update logged in it minus
    the previous epoch's; the last (maybe unfinished) epoch borrows the previous length."""
    last_update = {}
    for r in run.records:
        if r.epoch is None:
            raise PlotError(f"{run.path}:{r.line}: record without 'epoch' (needed by --x epoch)")
        last_update[r.epoch] = max(last_update.get(r.epoch, 0), r.update)
    epochs = sorted(last_update)
    start, length = {}, {}
    for i, e in enumerate(epochs):
        start[e] = last_update[epochs[i - 1]] if i > 0 else 0
        if i + 1 < len(epochs):
            length[e] = last_update[e] - start[e]
        elif i > 0:
            length[e] = length[epochs[i - 1]]
        else:
            length[e] = last_update[e]
    return {id(r): r.epoch - 1 + (r.update - start[r.epoch]) / max(length[r.epoch], 1) for r in run.records}


def finite(value):
    return _number(value) and math.isfinite(value)
