#!/usr/bin/python3
"""Builds the Hugging Face MarianMT (OPUS-MT layout) interop fixture
(tests/data/interop/marian/) with transformers' own code.

  1. one vocabulary over both sides, as OPUS-MT models have: vocab.json = </s> 0, <unk> 1, the
     pieces of source.spm then the new pieces of target.spm, <pad> last; MarianTokenizer's own
     save_pretrained writes vocab.json, source.spm, target.spm, tokenizer_config.json and
     special_tokens_map.json;
  2. a tiny MarianConfig with OPUS-MT's settings (swish, scaled embeddings, static sinusoidal
     positions, shared and tied embeddings, pad = decoder start = last id, eos = 0), a random
     MarianMTModel (eager attention) seeded, and a random final_logits_bias so that an importer
     that drops it fails; save_pretrained writes config.json, generation_config.json,
     model.safetensors (through the safetensors stand-in, written from the format) and
     pytorch_model.bin (torch.save, as transformers writes it with safe_serialization=False);
  3. loads the folder back with MarianMTModel.from_pretrained and records teacher-forced
     log-probs on a fixed batch (logits.npy, batch.json) and beam-5 translations of the first
     200 sentences of test2016.en with transformers' generate() (hyp.ids.txt, hyp.txt,
     hyp.scores.txt).

  make_marian_fixtures.py --transformers-src DIR            (re)write the fixture
  make_marian_fixtures.py --transformers-src DIR --check    rebuild and require identical files

DIR is a checkout (or `git archive`) of huggingface/transformers holding src/transformers; a
COMMIT file there names the commit recorded in MANIFEST.json. Run with Debian's /usr/bin/python3
(python3-torch 1.13 and python3-tqdm, -filelock, -regex, -requests, -yaml, -packaging)."""

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import interop_common as common  # noqa: E402
import transformers_env  # noqa: E402

SEED = 21
SIZES = dict(d_model=8, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
             decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
             max_position_embeddings=128)
# transformers' default init_std (0.02) leaves a random model's outputs nearly constant; a larger
# one makes them depend on the input. It is an ordinary config field.
INIT_STD = 0.5
FINAL_LOGITS_BIAS_STD = 0.5
# generate() settings; the length cap follows fairseq's rule: max_new_tokens =
# int(0.5 * source length + 5), source length counting the source's </s>.
GENERATION = dict(num_beams=5, length_penalty=1.0, early_stopping=False, do_sample=False,
                  no_repeat_ngram_size=0, num_return_sequences=1)
MAX_LEN_A, MAX_LEN_B = 0.5, 5


def build_vocab(spm_dir):
    import sentencepiece as spm
    pieces = ["</s>", "<unk>"]
    seen = set(pieces)
    for lang in ("en", "de"):
        sp = spm.SentencePieceProcessor(model_file=str(spm_dir / f"{lang}.model"))
        for i in range(sp.get_piece_size()):
            if sp.is_control(i) or sp.is_unknown(i):
                continue
            piece = sp.id_to_piece(i)
            if piece not in seen:
                seen.add(piece)
                pieces.append(piece)
    pieces.append("<pad>")
    return {p: i for i, p in enumerate(pieces)}


def make_tokenizer(out, work, spm_dir):
    from transformers import MarianTokenizer
    vocab = build_vocab(spm_dir)
    common.save_json(work / "vocab.json", vocab)
    tok = MarianTokenizer(str(spm_dir / "en.model"), str(spm_dir / "de.model"),
                          str(work / "vocab.json"), source_lang="en", target_lang="de")
    tok.save_pretrained(str(out))
    return vocab


def make_config(vocab):
    from transformers import MarianConfig
    pad = vocab["<pad>"]
    return MarianConfig(
        vocab_size=len(vocab), decoder_vocab_size=len(vocab), **SIZES,
        activation_function="swish", scale_embedding=True, static_position_embeddings=True,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        pad_token_id=pad, eos_token_id=vocab["</s>"], decoder_start_token_id=pad,
        forced_eos_token_id=vocab["</s>"], init_std=INIT_STD, dropout=0.1, attention_dropout=0.0, activation_dropout=0.0,
        architectures=["MarianMTModel"], attn_implementation="eager")


def make_model(out, config):
    import torch
    from transformers import GenerationConfig, MarianMTModel
    torch.manual_seed(SEED)
    model = MarianMTModel(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0.0, FINAL_LOGITS_BIAS_STD)
    # OPUS-MT's generation defaults (generation_config.json): never generate <pad>.
    pad = config.pad_token_id
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad]], num_beams=5, max_length=512, pad_token_id=pad,
        eos_token_id=config.eos_token_id, decoder_start_token_id=pad,
        forced_eos_token_id=config.eos_token_id)
    model.save_pretrained(str(out), safe_serialization=True)
    model.save_pretrained(str(out), safe_serialization=False)


def load(out):
    from transformers import MarianMTModel, MarianTokenizer
    model = MarianMTModel.from_pretrained(str(out), attn_implementation="eager")
    model.eval()
    return model, MarianTokenizer.from_pretrained(str(out))


def same_weights(out):
    """from_pretrained on model.safetensors and on pytorch_model.bin must give one model."""
    import torch
    from transformers import MarianMTModel
    alt = out.parent / "bin-only"
    shutil.copytree(out, alt)
    (alt / "model.safetensors").unlink()
    a = MarianMTModel.from_pretrained(str(out)).state_dict()
    b = MarianMTModel.from_pretrained(str(alt)).state_dict()
    shutil.rmtree(alt)
    if a.keys() != b.keys() or any(not torch.equal(a[k], b[k]) for k in a):
        common.fail("model.safetensors and pytorch_model.bin load to different weights")


def teacher_forced(model, tok):
    import torch
    val_en = common.read_lines(common.MULTI30K / "val.en")
    val_de = common.read_lines(common.MULTI30K / "val.de")
    src = [val_en[i] for i in common.LOGITS_PAIRS]
    tgt = [val_de[i] for i in common.LOGITS_PAIRS]
    enc = tok(src, text_target=tgt, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                    labels=enc["labels"])
    # The model builds decoder inputs from labels (shift_tokens_right: decoder start first,
    # padding -100 -> pad); recompute them the same way to record them.
    from transformers.models.marian.modeling_marian import shift_tokens_right
    decoder_input_ids = shift_tokens_right(enc["labels"], model.config.pad_token_id,
                                           model.config.decoder_start_token_id)
    lprobs = torch.log_softmax(out.logits, dim=-1)
    batch = {
        "source_lines": src, "target_lines": tgt,
        "input_ids": enc["input_ids"].tolist(), "attention_mask": enc["attention_mask"].tolist(),
        "labels": enc["labels"].tolist(), "decoder_input_ids": decoder_input_ids.tolist(),
        "pad": model.config.pad_token_id, "eos": model.config.eos_token_id,
        "decoder_start": model.config.decoder_start_token_id,
        "logits": "logits.npy: float32 [batch, target length, vocabulary], log_softmax of "
                  "lm_logits (final_logits_bias included) at each decoder_input_ids position "
                  "(rows at padded target positions are included and meaningless)",
    }
    return batch, lprobs.float().numpy()


def translate(model, tok):
    import torch
    lines = common.read_lines(common.MULTI30K / "test2016.en", common.TRANSLATE_LINES)
    ids, texts, scores = [], [], []
    for line in lines:
        enc = tok([line], return_tensors="pt")
        src_len = enc["input_ids"].shape[1]
        with torch.no_grad():
            out = model.generate(**enc, **GENERATION, max_new_tokens=int(MAX_LEN_A * src_len
                                                                          + MAX_LEN_B),
                                 output_scores=True, return_dict_in_generate=True)
        seq = out.sequences[0]
        ids.append(" ".join(str(t) for t in seq.tolist()))
        texts.append(tok.decode(seq, skip_special_tokens=True))
        scores.append(f"{out.sequences_scores[0].item():.6f}")
    return ids, texts, scores


def check_not_degenerate(ids):
    distinct = len(set(ids))
    if distinct < len(ids) // 2:
        common.fail(f"only {distinct} distinct translations of {len(ids)} (raise INIT_STD)")
    return distinct


def build(out, src, stubbed):
    import tempfile
    import torch
    import transformers
    spm_dir = common.FIXTURES / "spm"
    if not (spm_dir / "en.model").is_file():
        common.fail(f"{spm_dir}: no SentencePiece models; run make_spm_models.py first")
    with tempfile.TemporaryDirectory(prefix="csan-marian-") as tmp:
        vocab = make_tokenizer(out, Path(tmp), spm_dir)
        make_model(out, make_config(vocab))
    same_weights(out)
    model, tok = load(out)
    batch, lprobs = teacher_forced(model, tok)
    common.save_json(out / "batch.json", batch)
    common.save_npy(out / "logits.npy", lprobs)
    ids, texts, scores = translate(model, tok)
    common.save_lines(out / "hyp.ids.txt", ids)
    common.save_lines(out / "hyp.txt", texts)
    common.save_lines(out / "hyp.scores.txt", scores)
    common.write_manifest(out, {
        "library": "huggingface/transformers", "commit": common.git_commit(src),
        "transformers_version": transformers.__version__, "torch": torch.__version__,
        "python": sys.version.split()[0], "stubbed_modules": stubbed,
        "attention": "eager", "seed": SEED, "init_std": INIT_STD,
        "final_logits_bias_std": FINAL_LOGITS_BIAS_STD,
        "generation": dict(GENERATION, max_new_tokens=f"int({MAX_LEN_A} * source length "
                           f"+ {MAX_LEN_B})", batch="one sentence at a time",
                           bad_words_ids="[[pad]] from the model config"),
        **common.corpus_provenance(),
        "distinct_translations": check_not_degenerate(ids),
        "parameters": sum(p.numel() for p in model.parameters()),
        "hyp.ids.txt": "generate()'s sequences: decoder start (pad) first, </s> last"})


def main():
    opts = common.parse_fixture_args(
        __doc__, "--transformers-src", "transformers source folder (contains src/transformers)")
    common.single_threaded_torch()
    _, stubbed = transformers_env.import_transformers(opts.transformers_src)
    common.build_then_compare(lambda out: build(out, opts.transformers_src, stubbed),
                              common.FIXTURES / "marian", opts.check)


if __name__ == "__main__":
    main()
