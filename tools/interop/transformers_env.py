"""Makes transformers' own code importable with Debian's Python (torch 1.13, numpy,
sentencepiece, python3-tqdm/filelock/regex/requests/yaml/packaging) from a source folder.

transformers checks at import time (dependency_versions_check) that huggingface-hub and
safetensors are installed, by their package metadata. Neither is packaged by Debian: their
stand-ins live in tools/interop/stubs/, and this module writes, in a scratch folder put on
sys.path, the two small .dist-info records that tell importlib.metadata their versions."""

import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
STUB_VERSIONS = {"huggingface_hub": ("huggingface-hub", "0.26.0"),
                 "safetensors": ("safetensors", "0.4.5")}


def _write_dist_info(folder):
    for module, (dist, version) in STUB_VERSIONS.items():
        info = Path(folder) / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "top_level.txt").write_text(module + "\n")


def import_transformers(src):
    """Imports transformers from src (a checkout: src/transformers/ inside, or the package folder
    itself) and returns (module, stubbed names)."""
    src = Path(src).resolve()
    package_parent = src / "src" if (src / "src" / "transformers").is_dir() else src
    if not (package_parent / "transformers" / "models" / "marian" / "modeling_marian.py").is_file():
        raise SystemExit(f"{src}: not a transformers source folder "
                         "(no src/transformers/models/marian/modeling_marian.py)")
    scratch = tempfile.mkdtemp(prefix="csan-hf-metadata-")
    _write_dist_info(scratch)
    sys.path[:0] = [str(package_parent), str(HERE / "stubs"), scratch, str(HERE)]
    # tokenizers (Rust) is optional for transformers (is_tokenizers_available() reads its package
    # metadata, which the placeholder lacks, so transformers uses its own AddedToken and the slow
    # SentencePiece MarianTokenizer, the one OPUS-MT folders are made for); only its GGUF
    # integration imports it unconditionally.
    # torch 1.13's torch.distributed._shard (reached through transformers' FSDP checks) has the
    # same Python 3.11 dataclass defaults as fairseq's configs.
    import py311_dataclasses  # noqa: F401
    import absent_modules
    stubbed = absent_modules.install(["tokenizers"])
    import transformers
    _hashable_added_token()
    return transformers, ["huggingface_hub (tools/interop/stubs)",
                          "safetensors (tools/interop/stubs, written from the format)"] + [
                              f"{name} (placeholder: tools/interop/absent_modules.py)"
                              for name in stubbed]


def _hashable_added_token():
    """Without the tokenizers package, transformers defines its own AddedToken as
    @dataclass(eq=True) with no declared fields, which makes it unhashable and leaves it without
    __setstate__, and the slow tokenizers then fail in _add_tokens (`token in
    self._added_tokens_decoder`, `token.__setstate__(...)`). tokenizers' AddedToken hashes by
    content and updates its fields from a state dict; give the fallback the same two methods."""
    from transformers import tokenization_utils_base as base
    if getattr(base.AddedToken, "__hash__", None) is None:
        base.AddedToken.__hash__ = lambda self: hash(self.content)
    if not hasattr(base.AddedToken, "__setstate__"):
        base.AddedToken.__setstate__ = lambda self, state: self.__dict__.update(state)


def source_version(src):
    init = Path(src) / "src" / "transformers" / "__init__.py"
    match = re.search(r'__version__ = "([^"]+)"', init.read_text()) if init.is_file() else None
    return match[1] if match else "unknown"
