"""BLEU (Papineni et al., 2002) exactly as sacreBLEU 2.6.0 computes it, on csan's C++ scorer."""

import logging
from typing import Dict, List, Optional, Sequence, Union

from .. import _native
from .._native import Bleu as NativeBleu
from ..errors import BadOptionError
from .base import Metric, Score

_log = logging.getLogger(__name__)

#: BLEU's n-gram order; csan computes 1- to 4-grams only.
MAX_NGRAM_ORDER = 4

Number = Union[int, float]


class BLEUScore(Score):
    """A BLEU score with its statistics (sacreBLEU's ``BLEUScore``).

    :param score: BLEU, from 0 to 100.
    :param counts: matching n-grams for n = 1..4 (add-k smoothing included).
    :param totals: hypothesis n-grams for n = 1..4 (add-k smoothing included).
    :param precisions: the n-gram precisions in percent.
    :param bp: the brevity penalty.
    :param sys_len: hypothesis length in tokens.
    :param ref_len: the effective reference length (closest reference per segment).
    """

    def __init__(
        self,
        score: float,
        counts: List[Number],
        totals: List[Number],
        precisions: List[float],
        bp: float,
        sys_len: int,
        ref_len: int,
    ) -> None:
        super().__init__("BLEU", score)
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.prec_str = "/".join(f"{p:.1f}" for p in precisions)
        self.ratio = sys_len / ref_len if ref_len else 0
        self._verbose = _native.bleu_verbose(precisions, bp, self.ratio, sys_len, ref_len)


class BLEU(Metric[BLEUScore]):
    """BLEU as sacreBLEU 2.6.0's ``BLEU``, with the same arguments and results.

    :param lowercase: case-insensitive BLEU.
    :param force: do not warn about input that looks tokenized.
    :param tokenize: 13a (default), intl, zh, char, none, spm, flores101, flores200 or
        spBLEU-1K (the SentencePiece ones need ``spm_model`` or the model file in
        ``$SACREBLEU/models``: nothing is downloaded). None picks 13a, or zh when
        ``trg_lang`` is "zh".
    :param smooth_method: none, floor, add-k or exp.
    :param smooth_value: the value for floor (default 0.1) and add-k (default 1).
    :param max_ngram_order: must be 4 (csan computes 1- to 4-grams).
    :param effective_order: leave out n-gram orders without any match (use it for
        sentence-level BLEU).
    :param trg_lang: the target language, to choose the tokenizer as sacreBLEU does.
    :param references: reference streams to keep for later ``corpus_score(hyps, None)`` calls.
    :param spm_model: (csan only) the SentencePiece model file for the spm/flores tokenizers.
    """

    _native: NativeBleu

    SMOOTH_DEFAULTS: Dict[str, Optional[float]] = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
    TOKENIZERS = ("none", "zh", "13a", "intl", "char", "spm", "flores101", "flores200", "spBLEU-1K")
    TOKENIZER_DEFAULT = "13a"
    _TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}
    _TOKENIZER_ADVICE = {"zh": ("zh", "Chinese"), "ja": ("ja-mecab", "Japanese"), "ko": ("ko-mecab", "Korean")}

    def __init__(
        self,
        lowercase: bool = False,
        force: bool = False,
        tokenize: Optional[str] = None,
        smooth_method: str = "exp",
        smooth_value: Optional[float] = None,
        max_ngram_order: int = MAX_NGRAM_ORDER,
        effective_order: bool = False,
        trg_lang: str = "",
        references: Optional[Sequence[Sequence[Optional[str]]]] = None,
        *,
        spm_model: Optional[str] = None,
    ) -> None:
        if max_ngram_order != MAX_NGRAM_ORDER:
            raise BadOptionError(f"max_ngram_order: csan computes BLEU on 1- to 4-grams only (got {max_ngram_order})")
        if tokenize is None:
            tokenize = self._TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        elif trg_lang in self._TOKENIZER_ADVICE and tokenize != self._TOKENIZER_ADVICE[trg_lang][0]:
            best, language = self._TOKENIZER_ADVICE[trg_lang]
            _log.warning("Consider using the '%s' or 'spm' tokenizer for %s.", best, language)
        native = NativeBleu(
            tokenize=tokenize,
            spm_model=spm_model or "",
            lowercase=lowercase,
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=effective_order,
        )
        super().__init__(native, references)
        self._force = force
        self.trg_lang = trg_lang
        self.lowercase = lowercase
        self.smooth_value = smooth_value
        self.smooth_method = smooth_method
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        self.tokenizer_signature = self._signature_value("tok")

    @staticmethod
    def compute_bleu(
        correct: List[Number],
        total: List[Number],
        sys_len: int,
        ref_len: int,
        smooth_method: str = "none",
        smooth_value: Optional[float] = None,
        effective_order: bool = False,
        max_ngram_order: int = MAX_NGRAM_ORDER,
    ) -> BLEUScore:
        """BLEU from its sufficient statistics (matching and total n-grams per order,
        hypothesis and reference lengths), with smoothing."""
        metric = BLEU(
            tokenize="none",
            smooth_method=smooth_method,
            smooth_value=smooth_value,
            effective_order=effective_order,
            max_ngram_order=max_ngram_order,
        )
        return metric._compute_score_from_stats([sys_len, ref_len, *correct, *total])

    def _compute_score_from_stats(self, stats: List[float]) -> BLEUScore:
        fields = self._native.compute([float(x) for x in stats])
        # sacreBLEU's counts are ints, unless add-k added a float to orders 2 to 4.
        float_smoothing = self.smooth_method == "add-k" and isinstance(self.smooth_value, float)

        def number(value: float, order: int) -> Number:
            return value if float_smoothing and order > 0 else int(value)

        return BLEUScore(
            fields["score"],
            [number(v, n) for n, v in enumerate(fields["counts"])],
            [number(v, n) for n, v in enumerate(fields["totals"])],
            fields["precisions"],
            fields["bp"],
            fields["sys_len"],
            fields["ref_len"],
        )

    def _check_tokenized(self, hypotheses: Sequence[str]) -> None:
        if self._force or sum(1 for line in hypotheses if line.endswith(" .")) < 100:
            return
        _log.warning("That's 100 lines that end in a tokenized period ('.')")
        _log.warning("It looks like you forgot to detokenize your test data, which may hurt your score.")
        _log.warning(
            "If you insist your data is detokenized, or don't care, you can suppress this message with the `force` parameter."
        )

    def sentence_score(self, hypothesis: str, references: Sequence[Optional[str]]) -> BLEUScore:
        """BLEU of one hypothesis against its references; warns unless ``effective_order``."""
        if not self.effective_order:
            _log.warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)
