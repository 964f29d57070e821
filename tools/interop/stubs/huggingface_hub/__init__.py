"""Stand-in for huggingface_hub (not packaged by Debian). transformers imports it at start-up for
downloading and uploading; the interop scripts read and write local folders only. Names read
at import time are defined here; any other name is a function that raises when called, so a
code path that would reach the Hub fails loudly instead of doing something else."""

from . import constants  # noqa: F401
from .utils import _unavailable

_CACHED_NO_EXIST = object()


class StateDictSplit:
    def __init__(self, filename, names):
        self.is_sharded = False
        self.metadata = {}
        self.filename_to_tensors = {filename: list(names)}
        self.tensor_to_filename = {name: filename for name in names}


def split_torch_state_dict_into_shards(state_dict, *, filename_pattern, max_shard_size=None):
    """One shard only: the fixtures are far below any shard size."""
    return StateDictSplit(filename_pattern.format(suffix=""), state_dict.keys())


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _unavailable(f"huggingface_hub.{name}")
