"""Tagging with csan's tagging models from Python: :class:`Tagger`.

The models are loaded once and tag through the same C++ code as ``csan-generate`` on a
tagging checkpoint: the same chunks, the same tags.
"""

from __future__ import annotations

import os
from typing import List, NamedTuple, Optional, Sequence, Union

from .translator import PathOrPaths, _paths


class TaggedFile(NamedTuple):
    """What :meth:`Tagger.tag_conllu` tagged: ``words``, how many of them had a tag in the
    input (``gold``) and how many of those the model matched (``correct``)."""

    words: int
    gold: int
    correct: int

    @property
    def accuracy(self) -> Optional[float]:
        """Percent of the words tagged as the input was (None unless every word had a tag),
        the figure csan-generate prints."""
        return 100.0 * self.correct / self.words if self.words and self.gold == self.words else None


def _sentences(sentences: Sequence[Sequence[str]]) -> List[List[str]]:
    if isinstance(sentences, (str, bytes)):
        raise TypeError("sentences: a list of sentences (lists of words) is expected, not one str")
    result = []
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, (str, bytes)):
            raise TypeError(f"sentences[{i}]: a list of words is expected, not a {type(sentence).__name__}")
        words = list(sentence)
        for j, word in enumerate(words):
            if not isinstance(word, str):
                raise TypeError(f"sentences[{i}][{j}]: a str is expected, not {type(word).__name__}")
        result.append(words)
    return result


class Tagger:
    """Tags words with one csan tagging checkpoint, or several (their label probabilities
    are averaged).

    Args:
        path: a tagging checkpoint written by csan-train, or a list of them (they must
            share the vocabularies).
        device: ``"cpu"`` or ``"cuda"``.
        threads: LibTorch's CPU threads (process-wide); 0 leaves them as they are.

    Raises:
        csan.MissingFileError, csan.CorruptCheckpointError, csan.BadOptionError: with
        csan's one-line message naming the file or option (a translation checkpoint is a
        BadOptionError).
    """

    def __init__(self, path: PathOrPaths, device: str = "cpu", threads: int = 0) -> None:
        from . import _inference

        self._native = _inference.Tagger(paths=_paths(path), device=device, threads=threads)

    @property
    def column(self) -> str:
        """The CoNLL-U column the model predicts: ``"upos"`` or ``"xpos"``."""
        return self._native.column

    @property
    def device(self) -> str:
        """Where the models compute (``"cpu"``, ``"cuda"``)."""
        return self._native.device

    def tag(self, sentences: Sequence[Sequence[str]], batch_size: int = 64) -> List[List[str]]:
        """One tag per word of each sentence (a list of word forms, CoNLL-U's syntactic
        words), as csan-generate tags them; ``batch_size`` chunks per batch (0: all at
        once). The GIL is released while tagging."""
        return self._native.tag(_sentences(sentences), batch_size=batch_size)

    def tag_conllu(
        self, input_path: Union[str, os.PathLike], output_path: Union[str, os.PathLike], batch_size: int = 64
    ) -> TaggedFile:
        """Tags a CoNLL-U file into ``output_path``: the input with the model's column
        replaced, every other line unchanged (csan-generate's output, byte for byte). The
        output is written whole at the end, so an error leaves an existing one as it was.

        Raises:
            csan.MissingFileError: no such input; csan.BadInputError or csan.Error: a
            malformed line (``FILE:LINE: ...``).
        """
        words, gold, correct = self._native.tag_conllu(
            os.fspath(input_path), os.fspath(output_path), batch_size=batch_size
        )
        return TaggedFile(words, gold, correct)


__all__ = ["Tagger", "TaggedFile"]
