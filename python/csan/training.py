"""Training and data preparation from Python: :func:`train` and :func:`preprocess`.

Both run csan's executables' own C++ code in this process: ``csan.train`` is ``csan-train``
(the same log lines, ``metrics.jsonl`` and checkpoints for the same recipe and seed) and
``csan.preprocess`` is ``csan-preprocess`` (the same files, byte for byte).
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

PathLike = Union[str, os.PathLike]

# csan.train's own keyword arguments that are not csan-train flags of the same name.
_SWITCHES = {"cpu": "common.cpu", "eval_bleu": "task.eval_bleu"}


@dataclass
class TrainResult:
    """What a :func:`train` run produced.

    Attributes:
        save_dir: the directory of the checkpoints and ``metrics.jsonl``.
        last_checkpoint: ``SAVE_DIR/checkpoint_last.pt`` (None when nothing was saved).
        best_checkpoint: ``SAVE_DIR/checkpoint_best.pt`` (None without validation).
        last_valid: the last validation record of this run (None without one): ``loss``,
            ``nll_loss``, ``ppl``, the task's metrics and ``best_<metric>``.
        records: every record this run logged, as :func:`train`'s ``on_log`` got them.
        stopped_by: ``"SIGTERM"`` when a SIGTERM stopped the run (after saving) and its
            previous handler let the process go on; None otherwise.
    """

    save_dir: str
    last_checkpoint: Optional[str]
    best_checkpoint: Optional[str]
    last_valid: Optional[Dict[str, Any]]
    records: List[Dict[str, Any]] = field(default_factory=list)
    stopped_by: Optional[str] = None


def _override_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return json.dumps(value)  # YAML reads JSON: true, 0.0005, [1, 2]


def _setting(name: str, kind: str, value: Any) -> Union[bool, int, float, str]:
    if kind == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{name}: a bool is expected, not {type(value).__name__}")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name}: an int is expected, not {type(value).__name__}")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name}: a float is expected, not {type(value).__name__}")
        return float(value)
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: a str or path is expected, not {type(value).__name__}")
    return os.fspath(value)


def train(
    recipe: PathLike,
    data: Optional[PathLike] = None,
    save_dir: Optional[PathLike] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    on_log: Optional[Callable[[Dict[str, Any]], None]] = None,
    *,
    seed: Optional[int] = None,
    max_update: Optional[int] = None,
    max_epoch: Optional[int] = None,
    arch: Optional[str] = None,
    lr: Optional[float] = None,
    max_tokens: Optional[int] = None,
    max_sentences: Optional[int] = None,
    update_freq: Optional[int] = None,
    clip_norm: Optional[float] = None,
    patience: Optional[int] = None,
    save_interval_updates: Optional[int] = None,
    validate_interval_updates: Optional[int] = None,
    log_interval: Optional[int] = None,
    threads: Optional[int] = None,
    restore_file: Optional[PathLike] = None,
    source_lang: Optional[str] = None,
    target_lang: Optional[str] = None,
    precision: Optional[str] = None,
    tensorboard_logdir: Optional[PathLike] = None,
    cpu: bool = False,
    eval_bleu: bool = False,
    finetune_from_model: Optional[PathLike] = None,
    reuse_dictionaries: Optional[bool] = None,
    reset_optimizer: Optional[bool] = None,
    reset_lr_scheduler: Optional[bool] = None,
    reset_dataloader: Optional[bool] = None,
    reset_meters: Optional[bool] = None,
    store_ema: Optional[bool] = None,
    ema_decay: Optional[float] = None,
    ema_start_update: Optional[int] = None,
    ema_update_freq: Optional[int] = None,
    validate_with_ema: Optional[bool] = None,
    ema_seed_model: Optional[PathLike] = None,
) -> TrainResult:
    """Trains as ``csan-train RECIPE`` does, in this process.

    The keyword arguments are csan-train's flags (``max_update`` is ``--max-update``);
    ``overrides`` sets any recipe key as ``--set KEY=VALUE`` does (``{"optimization.lr":
    5e-4}``), before the flags. The run writes what csan-train writes: its log lines to
    stderr, ``SAVE_DIR/metrics.jsonl``, ``run.json``, ``recipe.yaml`` and the checkpoints,
    and resumes from ``SAVE_DIR/checkpoint_last.pt`` when there is one. The GIL is released
    while training.

    Args:
        recipe: a recipe (YAML), e.g. ``recipes/tiny-transformer.yaml``.
        data: the directory written by :func:`preprocess` (``task.data``).
        save_dir: where checkpoints and ``metrics.jsonl`` go (``checkpoint.save_dir``).
        overrides: recipe keys and values (str values as written on csan-train's command
            line; numbers, booleans and lists as such).
        on_log: called (with the GIL) with each record as it is written to
            ``metrics.jsonl``: a dict with that line's fields (``kind`` "train" or "valid",
            ``epoch``, ``update``, ``loss``, ...). An exception it raises ends the run
            (without a checkpoint) and propagates.

    Returns:
        A :class:`TrainResult`: the save dir, the checkpoints, the last validation.

    Raises:
        KeyboardInterrupt: after Ctrl-C (SIGINT), once the run has saved
            ``checkpoint_last.pt`` as csan-train does (calling ``train`` again with the same
            arguments resumes). SIGTERM also saves, then goes to the handler that was
            there before (by default it ends the process).
        csan.BadOptionError: an unknown recipe key or a bad value, a data-parallel run
            (world size > 1: use csan-train), ...
        csan.MissingFileError: a recipe, data directory or restore file that does not exist.
        csan.Error: any other error of csan-train, with its one-line message.
    """
    from . import _inference  # LibTorch is loaded with the first model, not with `import csan`

    given = {k: v for k, v in locals().items() if k not in ("recipe", "overrides", "on_log", "_inference")}
    assignments = [f"{key}={_override_text(value)}" for key, value in (overrides or {}).items()]
    settings: List[tuple] = []
    described = []
    for flag, key, kind in _inference.train_flags():
        name = flag.replace("-", "_")
        if given.get(name) is not None:
            settings.append((key, _setting(name, kind, given[name])))
            described.append(f"{name}={given[name]!r}")
    for name, key in _SWITCHES.items():
        if given[name]:
            settings.append((key, True))
            described.append(f"{name}=True")
    records: List[Dict[str, Any]] = []

    def log(record: Dict[str, Any]) -> None:
        records.append(record)
        if on_log is not None:
            on_log(record)

    command_line = "csan.train(" + ", ".join([repr(os.fspath(recipe))] + described) + ")"
    if overrides:
        command_line = command_line[:-1] + f", overrides={dict(overrides)!r})"
    status, directory = _inference.train(os.fspath(recipe), assignments, settings, command_line, log)
    last = os.path.join(directory, "checkpoint_last.pt")
    best = os.path.join(directory, "checkpoint_best.pt")
    valid = [r for r in records if r.get("kind") == "valid"]
    result = TrainResult(
        save_dir=directory,
        last_checkpoint=last if os.path.exists(last) else None,
        best_checkpoint=best if os.path.exists(best) else None,
        last_valid=valid[-1] if valid else None,
        records=records,
    )
    if status == 128 + signal.SIGINT:
        raise KeyboardInterrupt(f"csan.train: stopped by SIGINT; saved {last} (call train again to resume)")
    if status == 128 + signal.SIGTERM:
        signal.raise_signal(signal.SIGTERM)
        result.stopped_by = "SIGTERM"
    return result


def preprocess(task: str = "translation", **options: Any) -> str:
    """Prepares data as ``csan-preprocess --task TASK`` does, in this process: the same
    files, byte for byte. Returns the summary csan-preprocess prints.

    ``options`` are csan-preprocess's options for the task, ``_`` for ``-``: a value is
    passed as the option's argument, True passes a switch (``joined_dictionary=True``),
    None and False leave an option out, and a list of prefixes is joined with commas.

    Translation: ``source_lang``, ``target_lang``, ``trainpref``, ``validpref``,
    ``testpref``, ``destdir`` (default ``data-bin``), ``joined_dictionary``,
    ``spm_vocab_size``, ``spm_model_type``, ``spm_model``, ``workers``, ... Tagging
    (``task="tagging"``): ``trainpref``, ``validpref``, ``testpref`` (CoNLL-U prefixes),
    ``destdir``, ``tag_column`` ("upos" or "xpos"), ``vocab_protocol``, ``chunk_length``,
    ... ``csan-preprocess --help`` lists them all. The GIL is released while it works;
    Ctrl-C takes effect when it is done.

    Raises:
        csan.BadOptionError: an option the task does not have, a bad value.
        csan.MissingFileError: an input file that does not exist.
        csan.Error: any other error of csan-preprocess, with its one-line message.
    """
    from . import _native

    args = ["--task", task]
    for name, value in options.items():
        option = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(option)
        elif isinstance(value, (list, tuple)):
            args += [option, ",".join(os.fspath(v) for v in value)]
        elif isinstance(value, (str, int, float, os.PathLike)):
            args += [option, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
        else:
            raise TypeError(f"{name}: a str, number, bool or list is expected, not {type(value).__name__}")
    return _native.preprocess(args)


__all__ = ["train", "TrainResult", "preprocess"]
