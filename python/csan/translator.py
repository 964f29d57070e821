"""Translation with csan models from Python: :class:`Translator`.

The models are loaded once, in the precision asked for, and translate raw text with the
checkpoint's SentencePiece model, through the same C++ code as ``csan-generate`` (same
batching, same hypotheses). The GIL is released while translating; one Translator may be
called from several Python threads at once, and concurrent calls with the same options are
translated together as one set of batches.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Iterable, List, Optional, Sequence, Union

from .errors import BadInputError, BadOptionError

PathOrPaths = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]

# Raw lines read by translate_file before translating them: several batches, so that
# they translate in parallel (csan-generate reads 16 batches at a time for the same reason).
_FILE_CHUNK_LINES = 1024


def _paths(path: PathOrPaths) -> List[str]:
    if isinstance(path, (str, os.PathLike)):
        return [os.fspath(path)]
    paths = [os.fspath(p) for p in path]
    if not paths:
        raise BadOptionError("path: no checkpoint given")
    return paths


def _sentences(sentences: Iterable[str], what: str) -> List[str]:
    if isinstance(sentences, (str, bytes)):
        raise TypeError(f"{what}: a list of sentences is expected, not one {type(sentences).__name__}")
    sentences = list(sentences)
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"{what}[{i}]: a str is expected, not {type(s).__name__}")
    return sentences


class Translator:
    """Translates with one csan translation checkpoint, or an ensemble of several.

    Args:
        path: a checkpoint written by csan-train (or convert-checkpoint), or a list of them
            (an ensemble: they must share the dictionaries).
        device: ``"cpu"`` or ``"cuda"``.
        precision: ``"fp32"``, ``"bf16"``, ``"int8"`` (CPU) or ``"fp16"`` (GPU); an
            inference-only checkpoint decodes in its own precision.
        threads: LibTorch's CPU threads (process-wide); 0 leaves them as they are.
        shortlist: a lexical shortlist file (``build-shortlist``): the output layer scores
            only each batch's candidate words.
        quantize_skip: layers kept fp32 under bf16/int8 (parameter-name prefixes).
        source_lang, target_lang: the pair a multilingual checkpoint (task
            ``multilingual_translation``) translates, one of its pairs, as csan-generate's
            ``--source-lang``/``--target-lang``; required for one. Any other checkpoint
            translates its own pair (languages given must be its).
        verbose: print what loading did (precision, layers converted) to stderr.

    Raises:
        csan.MissingFileError, csan.CorruptCheckpointError, csan.BadOptionError: with
        csan's one-line message naming the file or option.
    """

    def __init__(
        self,
        path: PathOrPaths,
        device: str = "cpu",
        precision: str = "fp32",
        threads: int = 0,
        shortlist: Optional[Union[str, os.PathLike]] = None,
        quantize_skip: Sequence[str] = (),
        source_lang: Optional[str] = None,
        target_lang: Optional[str] = None,
        verbose: bool = False,
    ) -> None:
        from . import _inference  # LibTorch is loaded with the first model, not with `import csan`

        self._native = _inference.Translator(
            paths=_paths(path),
            device=device,
            precision=precision,
            quantize_skip=list(quantize_skip),
            threads=threads,
            shortlist=os.fspath(shortlist) if shortlist is not None else "",
            source_lang=source_lang or "",
            target_lang=target_lang or "",
            verbose=verbose,
        )

    @property
    def source_language(self) -> str:
        """The source language of the checkpoint's data (its ``-s``; a multilingual
        checkpoint's: ``source_lang``)."""
        return self._native.source_language

    @property
    def target_language(self) -> str:
        """The target language of the checkpoint's data (its ``-t``; a multilingual
        checkpoint's: ``target_lang``)."""
        return self._native.target_language

    @property
    def precision(self) -> str:
        """The precision the models decode in."""
        return self._native.precision

    @property
    def device(self) -> str:
        """Where the models compute (``"cpu"``, ``"cuda:0"``)."""
        return self._native.device

    def translate(
        self,
        sentences: Sequence[str],
        beam: int = 5,
        n_best: int = 1,
        lenpen: float = 1.0,
        max_len_a: float = 0.0,
        max_len_b: int = 200,
        min_len: int = 1,
        unkpen: float = 0.0,
        no_repeat_ngram_size: int = 0,
        sampling: bool = False,
        sampling_topk: int = -1,
        sampling_topp: float = -1.0,
        temperature: float = 1.0,
        seed: int = 1,
        batch_size: int = 64,
        max_tokens: int = 0,
        return_scores: bool = False,
        transformers_beam: bool = False,
    ) -> list:
        """Translates raw sentences (csan-generate's options, fairseq's meanings).

        Returns, for each sentence: its best translation (a ``str``) when ``n_best`` is 1
        and ``return_scores`` is False; the ``n_best`` best translations (``list[str]``)
        when ``n_best`` > 1; with ``return_scores``, a list of :class:`Hypothesis`
        (``text``, ``score``: the length-normalized log-probability, ``tokens``,
        ``positional_scores``), best first. An empty sentence translates to ``""`` (or
        no hypothesis). ``transformers_beam`` searches by transformers' ``generate()`` rules
        (csan-generate ``--transformers-beam``; models from ``csan-import --marian``).
        """
        lines = _sentences(sentences, "sentences")
        results = self._native.translate(
            lines,
            beam=beam,
            nbest=n_best,
            lenpen=lenpen,
            max_len_a=max_len_a,
            max_len_b=max_len_b,
            min_len=min_len,
            unkpen=unkpen,
            no_repeat_ngram_size=no_repeat_ngram_size,
            sampling=sampling,
            sampling_topk=sampling_topk,
            sampling_topp=sampling_topp,
            temperature=temperature,
            seed=seed,
            batch_size=batch_size,
            max_tokens=max_tokens,
            parallel_batches=0,
            transformers_beam=transformers_beam,
        )
        if return_scores:
            return results
        if n_best == 1:
            return [hyps[0].text if hyps else "" for hyps in results]
        return [[h.text for h in hyps] for hyps in results]

    def translate_file(
        self,
        input_path: Union[str, os.PathLike],
        output_path: Union[str, os.PathLike],
        progress: Optional[bool] = None,
        **options,
    ) -> int:
        """Translates a text file line by line into ``output_path`` (the best translation of
        each line), reading and translating it in chunks. The output is written to a
        temporary file and renamed at the end, so an error leaves an existing output as it
        was. ``progress`` (default: when stderr is a terminal) shows the lines done.
        ``options`` are :meth:`translate`'s (not ``n_best`` or ``return_scores``).
        Returns the number of lines translated.
        """
        for refused in ("n_best", "return_scores"):
            if refused in options:
                raise BadOptionError(f"translate_file: {refused} is not an option here (one translation per line)")
        input_path, output_path = os.fspath(input_path), os.fspath(output_path)
        show = sys.stderr.isatty() if progress is None else progress
        directory = os.path.dirname(os.path.abspath(output_path))
        handle, temporary = tempfile.mkstemp(prefix=".csan-translate-", dir=directory)
        done = 0
        try:
            with open(input_path, "rb") as source, os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
                chunk: List[str] = []
                for number, raw in enumerate(source, start=1):
                    try:
                        chunk.append(raw.decode("utf-8").rstrip("\r\n"))
                    except UnicodeDecodeError as e:
                        raise BadInputError(f"{input_path}:{number}: invalid UTF-8 (byte {e.start + 1})") from None
                    if len(chunk) == _FILE_CHUNK_LINES:
                        done = self._translate_chunk(chunk, out, done, show, options)
                        chunk = []
                done = self._translate_chunk(chunk, out, done, show, options)
            os.replace(temporary, output_path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        finally:
            if show:
                sys.stderr.write("\n")
        return done

    def _translate_chunk(self, chunk: List[str], out, done: int, show: bool, options: dict) -> int:
        if chunk:
            for line in self.translate(chunk, **options):
                out.write(line + "\n")
            done += len(chunk)
        if show:
            sys.stderr.write(f"\rtranslate_file: {done} lines")
            sys.stderr.flush()
        return done

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        max_tokens: int = 0,
        return_details: bool = False,
    ) -> list:
        """Forced decoding: log p(target | source) of each pair (natural log, summed over the
        target's tokens and its end of sentence), under the models' mean distribution (the
        probabilities the search uses). The target is encoded as a source would be (the
        checkpoint's SentencePiece model). With ``return_details``, a ``ForcedScore`` per
        pair instead: ``log_probability``, ``tokens`` (the target's ids, ending with
        ``</s>``) and ``positional_scores`` (log p of each).
        """
        sources = _sentences(sources, "sources")
        targets = _sentences(targets, "targets")
        scores = self._native.score(sources, targets, batch_size=batch_size, max_tokens=max_tokens)
        if return_details:
            return scores
        return [s.log_probability for s in scores]


__all__ = ["Translator"]
