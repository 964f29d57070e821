"""sacreBLEU's one-call functions (``sacrebleu.corpus_bleu`` and friends), same arguments and results."""

from typing import Optional, Sequence

from .bleu import BLEU, BLEUScore
from .chrf import CHRF, CHRFScore
from .ter import TER, TERScore

References = Sequence[Sequence[Optional[str]]]


def corpus_bleu(
    hypotheses: Sequence[str],
    references: References,
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    force: bool = False,
    lowercase: bool = False,
    tokenize: str = BLEU.TOKENIZER_DEFAULT,
    use_effective_order: bool = False,
) -> BLEUScore:
    """Corpus BLEU of ``hypotheses`` against one or more reference streams.

    :param hypotheses: one str per segment.
    :param references: a list of reference streams, each with one str per segment:
        ``corpus_bleu(hyps, [refs])`` for a single reference, ``[refs1, refs2]`` for two.
    :param smooth_method: exp (default), floor, add-k or none.
    :param smooth_value: the value for floor (default 0.1) and add-k (default 1).
    :param force: do not warn about input that looks tokenized.
    :param lowercase: case-insensitive BLEU.
    :param tokenize: 13a (default), intl, zh, char, none, spm, flores101, flores200, spBLEU-1K.
    :param use_effective_order: leave out n-gram orders without any match.
    :return: a :class:`BLEUScore` (``.score``, ``.counts``, ``.precisions``, ``.bp``, ...;
        ``str()`` gives sacreBLEU's line, e.g. "BLEU = 34.56 65.2/41.0/27.6/19.0 (BP = ...)").

    >>> from csan.metrics import corpus_bleu
    >>> corpus_bleu(["the cat sat on the mat"], [["the cat sat on the mat"]]).score
    100.00000000000004
    """
    metric = BLEU(lowercase, force, tokenize, smooth_method, smooth_value, effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(
    hypotheses: Sequence[str], references: References, smooth_value: Optional[float] = BLEU.SMOOTH_DEFAULTS["floor"]
) -> BLEUScore:
    """Corpus BLEU on the text as it is: no tokenization, floor smoothing, effective order."""
    return corpus_bleu(
        hypotheses,
        references,
        smooth_method="floor",
        smooth_value=smooth_value,
        force=True,
        tokenize="none",
        use_effective_order=True,
    )


def sentence_bleu(
    hypothesis: str,
    references: Sequence[Optional[str]],
    smooth_method: str = "exp",
    smooth_value: Optional[float] = None,
    lowercase: bool = False,
    tokenize: str = BLEU.TOKENIZER_DEFAULT,
    use_effective_order: bool = True,
) -> BLEUScore:
    """BLEU of one hypothesis against its references (a list of str), with effective order by default.

    BLEU is a corpus metric: the mean of sentence scores is not the corpus score.
    """
    metric = BLEU(lowercase, False, tokenize, smooth_method, smooth_value, effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)


def corpus_chrf(
    hypotheses: Sequence[str],
    references: References,
    char_order: int = CHRF.CHAR_ORDER,
    word_order: int = CHRF.WORD_ORDER,
    beta: int = CHRF.BETA,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    """Corpus chrF (chrF++ with ``word_order=2``) of ``hypotheses`` against reference streams.

    :param references: a list of reference streams (``[refs]`` for a single reference).
    :param char_order: character n-gram order.
    :param word_order: word n-gram order (2 = chrF++).
    :param beta: the weight of recall against precision.
    :param remove_whitespace: drop whitespace before extracting character n-grams.
    :param eps_smoothing: epsilon smoothing instead of sacreBLEU's effective order.
    """
    metric = CHRF(char_order, word_order, beta, whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)
    return metric.corpus_score(hypotheses, references)


def sentence_chrf(
    hypothesis: str,
    references: Sequence[Optional[str]],
    char_order: int = CHRF.CHAR_ORDER,
    word_order: int = CHRF.WORD_ORDER,
    beta: int = CHRF.BETA,
    remove_whitespace: bool = True,
    eps_smoothing: bool = False,
) -> CHRFScore:
    """chrF of one hypothesis against its references (a list of str); options as :func:`corpus_chrf`."""
    metric = CHRF(char_order, word_order, beta, whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)
    return metric.sentence_score(hypothesis, references)


def corpus_ter(
    hypotheses: Sequence[str],
    references: References,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    """Corpus TER of ``hypotheses`` against reference streams (``[refs]`` for a single reference).

    :param normalized: Tercom's normalisation and tokenization.
    :param no_punct: remove punctuation.
    :param asian_support: special treatment of CJK characters.
    :param case_sensitive: keep case (TER lowercases by default).
    """
    metric = TER(normalized, no_punct, asian_support, case_sensitive)
    return metric.corpus_score(hypotheses, references)


def sentence_ter(
    hypothesis: str,
    references: Sequence[Optional[str]],
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> TERScore:
    """TER of one hypothesis against its references (a list of str); options as :func:`corpus_ter`."""
    metric = TER(normalized, no_punct, asian_support, case_sensitive)
    return metric.sentence_score(hypothesis, references)
