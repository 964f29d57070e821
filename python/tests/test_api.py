"""csan.metrics behaves as sacreBLEU 2.6.0's API beyond the recorded vectors: reference
caching, a variable number of references (None), any iterable as input, value types,
signatures, Score.format/repr, BLEU.compute_bleu, tokenizer choice and warnings."""

from __future__ import annotations

import logging

import pytest

import csan
from csan.metrics import (
    BLEU,
    CHRF,
    METRICS,
    SACREBLEU_VERSION,
    TER,
    BLEUScore,
    Signature,
    corpus_bleu,
    corpus_chrf,
    raw_corpus_bleu,
    sentence_bleu,
    sentence_chrf,
    sentence_ter,
)
from sacrebleu_vectors import lines

HYPS = list(lines("de500", "sys_c.de", True))
REFS = list(lines("de500", "ref.de", True))
MULTI_HYPS = list(lines("multiref_de", "sys_b.de", True))
MULTI_REF1 = list(lines("multiref_de", "ref1.de", True))
MULTI_REF2 = list(lines("multiref_de", "ref2.de", True))


def test_package_constants() -> None:
    assert SACREBLEU_VERSION == "2.6.0"
    assert METRICS == {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}
    assert csan.__version__.count(".") == 2


@pytest.mark.parametrize("make", [BLEU, CHRF, TER])
def test_cached_references_give_the_same_result(make) -> None:
    direct = make()
    cached = make(references=[REFS])
    assert repr(direct.corpus_score(HYPS, [REFS])) == repr(cached.corpus_score(HYPS, None))
    assert repr(cached.corpus_score(HYPS, [])) == repr(cached.corpus_score(HYPS, None))
    assert str(direct.get_signature()) == str(cached.get_signature())


@pytest.mark.parametrize("make", [BLEU, CHRF, TER])
def test_missing_references_score_segments_on_what_they_have(make) -> None:
    """None in a stream: each segment is scored on its present references, as sacreBLEU does."""
    first = [r if i % 3 else None for i, r in enumerate(MULTI_REF1)]
    second = [r if i % 3 == 0 or i % 2 else None for i, r in enumerate(MULTI_REF2)]
    metric = make()
    stats = metric._extract_corpus_statistics(MULTI_HYPS, [first, second])
    for i, hyp in enumerate(MULTI_HYPS):
        present = [[ref[i]] for ref in (first, second) if ref[i] is not None]
        if present:
            assert stats[i] == make()._extract_corpus_statistics([hyp], present)[0], i
    assert "nrefs:var|" in str(metric.get_signature())
    # One reference per segment, but from either stream: nrefs stays a number.
    alternating = [r if i % 2 else None for i, r in enumerate(MULTI_REF1)]
    other = [None if i % 2 else r for i, r in enumerate(MULTI_REF1)]
    single = make().corpus_score(MULTI_HYPS, [MULTI_REF1])
    assert repr(metric.corpus_score(MULTI_HYPS, [alternating, other])) == repr(single)
    assert str(metric.get_signature()).startswith("nrefs:1|")


def test_any_sequence_or_iterable() -> None:
    expected = corpus_bleu(HYPS, [REFS]).score
    assert corpus_bleu(tuple(HYPS), (tuple(REFS),)).score == expected
    assert corpus_bleu(iter(HYPS), [iter(REFS)]).score == expected
    assert corpus_bleu((h for h in HYPS), [REFS]).score == expected


def test_value_types() -> None:
    score = corpus_bleu(HYPS, [REFS])
    assert all(type(v) is int for v in score.counts + score.totals + [score.sys_len, score.ref_len])
    assert all(type(v) is float for v in score.precisions + [score.bp, score.score])
    assert score.prec_str == "/".join(f"{p:.1f}" for p in score.precisions)
    smoothed = corpus_bleu(HYPS, [REFS], smooth_method="add-k", smooth_value=0.5)
    assert type(smoothed.counts[0]) is int and all(type(v) is float for v in smoothed.counts[1:])
    assert smoothed.counts[1] == score.counts[1] + 0.5
    assert type(corpus_chrf(HYPS, [REFS]).score) is float


def test_compute_bleu_from_statistics() -> None:
    metric = BLEU()
    stats = metric._extract_corpus_statistics(HYPS, [REFS]).sum()
    score = BLEU.compute_bleu(stats[2:6], stats[6:], int(stats[0]), int(stats[1]), smooth_method="exp")
    assert repr(score) == repr(metric.corpus_score(HYPS, [REFS]))
    assert BLEU.compute_bleu([0, 0, 0, 0], [5, 4, 3, 2], 5, 6).score == 0.0


def test_score_format_and_repr() -> None:
    score = corpus_chrf(HYPS, [REFS])
    assert repr(score) == str(score) == f"chrF2 = {score.score:.2f}"
    assert score.format(width=4, score_only=True) == f"{score.score:.4f}"
    assert score.format(signature="nrefs:1|version:2.6.0") == f"chrF2|nrefs:1|version:2.6.0 = {score.score:.2f}"
    as_json = score.format(width=1, signature="nrefs:1|version:2.6.0", is_json=True)
    assert as_json == (
        '{\n "name": "chrF2",\n "score": ' + f"{score.score:.1f}" + ',\n "signature": "nrefs:1|version:2.6.0",\n'
        ' "nrefs": "1",\n "version": "2.6.0"\n}'
    )
    bootstrapped = BLEU().corpus_score(HYPS, [REFS], n_bootstrap=100)
    assert f"(μ = {bootstrapped._mean:.2f} ± {bootstrapped._ci:.2f})" in repr(bootstrapped)
    # estimate_ci on any scores: the mean and half the 1/40..39/40 range.
    scores = [BLEUScore(float(s), [1] * 4, [1] * 4, [100.0] * 4, 1.0, 1, 1) for s in range(80)]
    target = BLEUScore(50.0, [1] * 4, [1] * 4, [100.0] * 4, 1.0, 1, 1)
    target.estimate_ci(scores)
    assert (target._mean, target._ci) == (39.5, 0.5 * (77 - 2))


def test_signature_object() -> None:
    metric = TER(normalized=True)
    metric.corpus_score(HYPS, [REFS])
    signature = metric.get_signature()
    assert isinstance(signature, Signature)
    assert str(signature) == repr(signature) == "nrefs:1|case:lc|tok:tercom|norm:yes|punct:yes|asian:no|version:2.6.0"
    assert signature.format(short=True) == "#:1|c:lc|t:tercom|nr:yes|pn:yes|as:no|v:2.6.0"
    signature.update("test", "multi30k/2016")
    signature.update("bs", 100)
    signature.update("norm", False)
    assert str(signature) == (
        "nrefs:1|bs:100|case:lc|tok:tercom|norm:no|punct:yes|asian:no|test:multi30k/2016|version:2.6.0"
    )
    assert metric.tokenizer_signature == "tercom"


def test_tokenizer_choice_and_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    zh = BLEU(trg_lang="zh")
    zh.corpus_score(["你好世界"], [["你好"]])
    assert zh.tokenizer_signature == "zh" and "|tok:zh|" in str(zh.get_signature())
    BLEU(trg_lang="zh", tokenize="13a")
    assert "Consider using the 'zh' or 'spm' tokenizer for Chinese." in caplog.text
    caplog.clear()
    tokenized = ["a b ."] * 100
    BLEU().corpus_score(tokenized, [tokenized])
    assert "That's 100 lines that end in a tokenized period ('.')" in caplog.text
    caplog.clear()
    BLEU(force=True).corpus_score(tokenized, [tokenized])
    BLEU().corpus_score(tokenized[:99], [tokenized[:99]])
    assert caplog.text == ""
    BLEU().sentence_score("a b", ["a b"])
    assert "It is recommended to enable `effective_order` for sentence-level BLEU." in caplog.text


def test_sentence_functions() -> None:
    hyp, ref = HYPS[3], REFS[3]
    assert sentence_bleu(hyp, [ref]).score == BLEU(effective_order=True).corpus_score([hyp], [[ref]]).score
    assert sentence_chrf(hyp, [ref], word_order=2).name == "chrF2++"
    assert sentence_ter(hyp, [ref, None]).score == TER().corpus_score([hyp], [[ref]]).score
    raw = raw_corpus_bleu(HYPS, [REFS])
    assert raw.score == corpus_bleu(
        HYPS, [REFS], smooth_method="floor", smooth_value=0.1, force=True, tokenize="none", use_effective_order=True
    ).score
