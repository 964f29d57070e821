#!/usr/bin/python3
"""Builds the fairseq interop fixtures (tests/data/interop/fairseq/) with fairseq's own code.

For each variant of the `transformer` family (VARIANTS below) it:
  1. builds dict.en.txt / dict.de.txt the way fairseq-preprocess does (TranslationTask.build_dictionary
     over the SentencePiece-encoded Multi30k training text: counts, padding to a multiple of 8);
  2. parses the training options with fairseq's own parser (options.parse_args_and_arch), builds
     the task and the model with fairseq's code (tasks.setup_task, task.build_model), seeded;
  3. saves checkpoint.pt as fairseq's Trainer.save_checkpoint does (Trainer.state_dict layout,
     checkpoint_utils.torch_persistent_save): cfg is a plain container, cfg["model"] the argparse
     Namespace that convert_namespace_to_omegaconf puts there for legacy architectures;
  4. loads it back with checkpoint_utils.load_model_ensemble_and_task (what fairseq-generate
     does) and records teacher-forced decoder log-probs on a fixed batch (logits.npy, batch.json)
     and beam-5 translations of the first 200 sentences of test2016.en with fairseq's
     SequenceGenerator (hyp.ids.txt, hyp.txt, hyp.scores.txt);
  5. checks that the minimal checkpoints of FORMATS.md 6(a)/6(b) (cfg holding only plain
     dicts/lists/strings/numbers, or with cfg["model"] a small Namespace) load to the same
     log-probs, and that dropping encoder.version/decoder.version changes pre-norm models.

  make_fairseq_fixtures.py --fairseq-src DIR            (re)write the fixtures
  make_fairseq_fixtures.py --fairseq-src DIR --check    rebuild in a scratch folder and require
                                                        every file to be identical

DIR is a checkout (or `git archive`) of facebookresearch/fairseq; a COMMIT file or .git there
names the commit recorded in MANIFEST.json. Run it with Debian's /usr/bin/python3 (python3-torch,
python3-sentencepiece, python3-numpy, python3-omegaconf, python3-bitarray). Missing dependencies
are stubbed (see README.md)."""

import sys
from argparse import Namespace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import interop_common as common  # noqa: E402

# fairseq imports these at start-up for audio, classification and scoring code that translation
# never runs; absent_modules makes them importable placeholders that raise if used.
OPTIONAL_MODULES = ["sklearn", "scipy", "torchaudio", "soundfile", "editdistance", "sacrebleu"]

# Sizes shared by every variant: tiny, so the fixtures stay small, with two layers on each side
# so that layer stacking and the final layer norms are exercised.
SIZE_FLAGS = [
    "--encoder-embed-dim", "8", "--encoder-ffn-embed-dim", "16", "--encoder-layers", "2",
    "--encoder-attention-heads", "2", "--decoder-embed-dim", "8", "--decoder-ffn-embed-dim", "16",
    "--decoder-layers", "2", "--decoder-attention-heads", "2",
    "--max-source-positions", "128", "--max-target-positions", "128",
]

# make_init_distinct's factors (parameter-name suffix -> factor). Tied: larger sublayer outputs
# (the source, through cross-attention, then outweighs the token's own embedding) read out
# through a sharper last layer norm. Untied: a sharper output projection.
INIT_TIED = {"out_proj.weight": 3.0, "fc2.weight": 3.0, "decoder.layers.1.final_layer_norm.weight": 4.0}
INIT_TIED_PRENORM = {"out_proj.weight": 3.0, "fc2.weight": 3.0, "decoder.layer_norm.weight": 4.0}
INIT_UNTIED = {"decoder.output_projection.weight": 4.0}

VARIANTS = {
    # fairseq's base arch: post-norm, one joined dictionary and one embedding matrix for
    # encoder input, decoder input and output, sinusoidal positions, ReLU, scaled embeddings.
    "transformer_postnorm_shared": dict(
        arch="transformer", joined=True, seed=11, init_scaling=INIT_TIED,
        flags=["--share-all-embeddings"]),
    # the IWSLT arch: pre-norm on both sides (so final layer norms), separate dictionaries,
    # decoder input and output tied, learned positions, layernorm_embedding, GELU.
    "transformer_iwslt_prenorm_learned": dict(
        arch="transformer_iwslt_de_en", joined=False, seed=12, init_scaling=INIT_TIED_PRENORM,
        flags=["--encoder-normalize-before", "--decoder-normalize-before",
               "--share-decoder-input-output-embed", "--encoder-learned-pos",
               "--decoder-learned-pos", "--layernorm-embedding", "--activation-fn", "gelu"]),
    # post-norm, nothing tied (separate output projection), no embedding scale, learned
    # positions. (Pre-norm on one side only is not expressible in csan or CTranslate2.)
    "transformer_untied_noscale": dict(
        arch="transformer", joined=False, seed=13, init_scaling=INIT_UNTIED,
        flags=["--no-scale-embedding", "--encoder-learned-pos", "--decoder-learned-pos"]),
}

# Beam search as fairseq-generate runs it, with a short length cap so that random models stop:
# max length = max_len_a * source length + max_len_b (SequenceGenerator._generate).
GENERATION = dict(beam=5, max_len_a=0.5, max_len_b=5, lenpen=1.0, unkpen=0.0)
BATCH_SENTENCES = 1


def import_fairseq(src):
    sys.path.insert(0, str(HERE / "stubs"))
    sys.path.insert(0, str(src))
    import py311_dataclasses  # noqa: F401  (before fairseq's dataclasses are defined)
    import absent_modules
    stubbed = absent_modules.install(OPTIONAL_MODULES)
    import logging
    logging.disable(logging.WARNING)
    import fairseq  # noqa: F401
    return stubbed


def encode_corpora(work, spm_dir):
    for lang in ("en", "de"):
        common.spm_encode_file(spm_dir / f"{lang}.model", common.MULTI30K / f"train.{lang}",
                               work / f"train.spm.{lang}")


def build_dictionaries(out, work, joined):
    from fairseq.tasks.translation import TranslationTask
    files = {lang: [str(work / f"train.spm.{lang}")] for lang in ("en", "de")}
    if joined:
        both = files["en"] + files["de"]
        d = TranslationTask.build_dictionary(both, workers=1, threshold=-1, nwords=-1,
                                             padding_factor=8)
        dicts = {"en": d, "de": d}
    else:
        dicts = {lang: TranslationTask.build_dictionary(f, workers=1, threshold=-1, nwords=-1,
                                                        padding_factor=8)
                 for lang, f in files.items()}
    for lang, d in dicts.items():
        d.save(str(out / f"dict.{lang}.txt"))


def parse_training_args(data_dir, variant):
    from fairseq import options
    parser = options.get_training_parser()
    argv = [str(data_dir), "--task", "translation", "-s", "en", "-t", "de",
            "--arch", variant["arch"], "--optimizer", "adam", "--lr", "0.0005",
            "--lr-scheduler", "inverse_sqrt", "--criterion", "label_smoothed_cross_entropy",
            "--label-smoothing", "0.1", "--max-tokens", "4096", "--seed", str(variant["seed"]),
            "--dropout", "0.1", *SIZE_FLAGS, *variant["flags"]]
    return options.parse_args_and_arch(parser, argv)


def group_dict(dataclass_type, args):
    """One config group as convert_namespace_to_omegaconf fills it: each field from the parsed
    options where present, else the dataclass default (dataclass/utils.py _override_attr)."""
    import dataclasses
    group = {}
    for name, fld in dataclass_type.__dataclass_fields__.items():
        if name.startswith("_"):
            continue
        if hasattr(args, name):
            value = getattr(args, name)
        elif fld.default_factory is not dataclasses.MISSING:
            value = fld.default_factory()
        else:
            value = fld.default
        if isinstance(value, tuple):
            value = list(value)
        group[name] = value
    return group


def fairseq_cfg(args):
    """The cfg fairseq-train stores: FairseqConfig's groups resolved to plain containers
    (Trainer.state_dict: OmegaConf.to_container(cfg, resolve=True, enum_to_str=True)), the task,
    criterion, optimizer and scheduler groups from their registered dataclasses with `_name`, and
    cfg["model"] the argparse Namespace with `_name` = arch, because the legacy `transformer`
    model has no dataclass (convert_namespace_to_omegaconf, the `cfg.model is None` branch).
    Hydra's compose is not available here, so the groups are filled as its overrides would."""
    from omegaconf import OmegaConf
    from fairseq.dataclass.configs import FairseqConfig
    from fairseq.registry import REGISTRIES
    from fairseq.tasks import TASK_DATACLASS_REGISTRY
    from fairseq.dataclass import FairseqDataclass
    cfg = {}
    for name, fld in FairseqConfig.__dataclass_fields__.items():
        t = fld.type
        if isinstance(t, type) and issubclass(t, FairseqDataclass):
            cfg[name] = group_dict(t, args)
        else:
            cfg[name] = None
    cfg["task"] = dict(group_dict(TASK_DATACLASS_REGISTRY[args.task], args), _name=args.task)
    for reg in ("criterion", "optimizer", "lr_scheduler"):
        choice = getattr(args, reg)
        cfg[reg] = dict(group_dict(REGISTRIES[reg]["dataclass_registry"][choice], args),
                        _name=choice)
    container = OmegaConf.to_container(OmegaConf.create(cfg), resolve=True, enum_to_str=True)
    model = Namespace(**vars(args))
    model._name = args.arch
    container["model"] = model
    return container


def minimal_plain_cfg(args, data_dir):
    """The smallest cfg that fairseq's loader and TransformerModel accept, with plain types only:
    what an exporter writes (FORMATS.md, "fairseq: what an exporter writes")."""
    keys = ["encoder_embed_dim", "encoder_ffn_embed_dim", "encoder_layers",
            "encoder_attention_heads", "encoder_normalize_before", "encoder_learned_pos",
            "decoder_embed_dim", "decoder_ffn_embed_dim", "decoder_layers",
            "decoder_attention_heads", "decoder_normalize_before", "decoder_learned_pos",
            "activation_fn", "share_decoder_input_output_embed", "share_all_embeddings",
            "no_scale_embedding", "layernorm_embedding", "max_source_positions",
            "max_target_positions"]
    model = {k: getattr(args, k) for k in keys}
    model["_name"] = args.arch
    return {"model": model,
            "task": {"_name": "translation", "data": str(data_dir), "source_lang": "en",
                     "target_lang": "de"}}


def minimal_plain_state(args, data_dir, model):
    """The smallest checkpoint fairseq loads: checkpoint_utils._upgrade_state_dict indexes
    state["optimizer_history"][-1]["lr_scheduler_state"] (or needs "best_loss") and
    state["extra_state"]; everything else it fills in."""
    return {"args": None, "cfg": minimal_plain_cfg(args, data_dir), "model": model.state_dict(),
            "optimizer_history": [{"lr_scheduler_state": {}}], "extra_state": {}}


def make_init_distinct(model, scaling):
    """Random models tend to repeat one token: with flat output distributions, or (tied
    embeddings) where a token's own embedding dominates the residual stream and scores itself
    highest. Each variant scales a few initial values (VARIANTS[...]["init_scaling"]: parameter
    name -> factor; tied parameters are one tensor, scaled once) so that each step's choice is
    sharp and depends on the source and the position. Only initial values change."""
    import torch
    with torch.no_grad():
        for name, p in model.named_parameters():
            for suffix, factor in scaling.items():
                if name.endswith(suffix):
                    p.mul_(factor)


def checkpoint_state(cfg, model):
    """Trainer.state_dict's layout (fairseq/trainer.py), without optimizer state
    (--no-save-optimizer-state), as released fairseq checkpoints usually are."""
    return {
        "args": None,
        "cfg": cfg,
        "model": model.state_dict(),
        "criterion": None,
        "optimizer_history": [{
            "criterion_name": "LabelSmoothedCrossEntropyCriterion",
            "optimizer_name": "FairseqAdam",
            "lr_scheduler_state": {"best": None},
            "num_updates": 0,
        }],
        "task_state": {},
        "extra_state": {"metrics": {}, "previous_training_time": 0.0,
                        "train_iterator": {"epoch": 1, "iterations_in_epoch": 0,
                                           "shuffle": True}},
    }


def load(path, data_dir):
    from fairseq import checkpoint_utils
    models, cfg, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(path)], arg_overrides={"data": str(data_dir)})
    for m in models:
        m.eval()
    return models, cfg, task


def encode(task, spm_dir, lines, lang):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=str(spm_dir / f"{lang}.model"))
    d = task.source_dictionary if lang == "en" else task.target_dictionary
    return [d.encode_line(" ".join(sp.encode(line, out_type=str)), add_if_not_exist=False,
                          append_eos=True).long() for line in lines]


def teacher_forced(models, task, spm_dir):
    """Log-probs of the decoder on a fixed batch, through fairseq's own collater (left-padded
    source, right-padded target, prev_output_tokens = </s> + target[:-1])."""
    import torch
    from fairseq.data import LanguagePairDataset
    src_lines = [common.read_lines(common.MULTI30K / "val.en")[i] for i in common.LOGITS_PAIRS]
    tgt_lines = [common.read_lines(common.MULTI30K / "val.de")[i] for i in common.LOGITS_PAIRS]
    src = encode(task, spm_dir, src_lines, "en")
    tgt = encode(task, spm_dir, tgt_lines, "de")
    dataset = LanguagePairDataset(src, [len(t) for t in src], task.source_dictionary,
                                  tgt, [len(t) for t in tgt], task.target_dictionary)
    sample = dataset.collater([dataset[i] for i in range(len(src))])
    # The collater sorts by source length; keep the batch in its file order instead.
    order = sample["id"].argsort()
    net_input = {k: v[order] for k, v in sample["net_input"].items()}
    target = sample["target"][order]
    with torch.no_grad():
        out = models[0](**net_input)
        lprobs = models[0].get_normalized_probs(out, log_probs=True)
    batch = {
        "source_lines": src_lines, "target_lines": tgt_lines,
        "src_tokens_left_padded": net_input["src_tokens"].tolist(),
        "src_lengths": net_input["src_lengths"].tolist(),
        "prev_output_tokens": net_input["prev_output_tokens"].tolist(),
        "target": target.tolist(),
        "pad": task.target_dictionary.pad(), "eos": task.target_dictionary.eos(),
        "logits": "logits.npy: float32 [batch, target length, target vocabulary], log_softmax "
                  "of the decoder output at each position of prev_output_tokens "
                  "(rows at padded target positions are included and meaningless)",
    }
    return batch, lprobs.float().numpy()


def translate(models, task, spm_dir):
    import torch
    from fairseq import utils
    from fairseq.dataclass.configs import GenerationConfig
    from omegaconf import OmegaConf
    lines = common.read_lines(common.MULTI30K / "test2016.en", common.TRANSLATE_LINES)
    tokens = encode(task, spm_dir, lines, "en")
    gen = OmegaConf.structured(GenerationConfig)
    for k, v in GENERATION.items():
        gen[k] = v
    generator = task.build_generator(models, gen)
    dataset = task.build_dataset_for_inference(tokens, [len(t) for t in tokens])
    ids, texts, scores = [None] * len(lines), [None] * len(lines), [None] * len(lines)
    for start in range(0, len(lines), BATCH_SENTENCES):
        sample = dataset.collater([dataset[i] for i in range(start, min(start + BATCH_SENTENCES,
                                                                         len(lines)))])
        with torch.no_grad():
            hypos = task.inference_step(generator, models, sample)
        for sid, hypo in zip(sample["id"].tolist(), hypos):
            best = hypo[0]
            _, text, _ = utils.post_process_prediction(
                hypo_tokens=best["tokens"].int(), src_str=lines[sid], alignment=None,
                align_dict=None, tgt_dict=task.target_dictionary, remove_bpe="sentencepiece",
                extra_symbols_to_ignore={task.target_dictionary.eos()})
            ids[sid] = " ".join(str(t) for t in best["tokens"].tolist())
            texts[sid] = text
            scores[sid] = f"{best['score'].item():.6f}"
    return ids, texts, scores


def check_not_degenerate(name, ids):
    distinct = len(set(ids))
    stopped = sum(1 for h in ids if len(h.split()) < 5)
    if distinct < len(ids) // 2:
        common.fail(f"{name}: only {distinct} distinct translations of {len(ids)} "
                    "(random model too flat; see make_init_distinct)")
    return distinct, stopped


def build_variant(out, work, spm_dir, name, variant):
    import numpy as np
    import torch
    from fairseq import checkpoint_utils, tasks
    out.mkdir()
    build_dictionaries(out, work, variant["joined"])
    args = parse_training_args(out, variant)
    # fairseq stores the data folder it trained on; the fixture records "." (the checkpoint's
    # own folder, where its dict.*.txt are) so that its bytes do not depend on a scratch path.
    args.data = "."
    cfg = fairseq_cfg(args)
    torch.manual_seed(variant["seed"])
    task = tasks.setup_task(Namespace(**dict(vars(args), data=str(out))))
    model = task.build_model(Namespace(**vars(args)))
    make_init_distinct(model, variant["init_scaling"])
    ckpt = out / "checkpoint.pt"
    checkpoint_utils.torch_persistent_save(checkpoint_state(cfg, model), str(ckpt))

    models, _, task = load(ckpt, out)
    batch, lprobs = teacher_forced(models, task, spm_dir)
    common.save_json(out / "batch.json", batch)
    common.save_npy(out / "logits.npy", lprobs)
    ids, texts, scores = translate(models, task, spm_dir)
    common.save_lines(out / "hyp.ids.txt", ids)
    common.save_lines(out / "hyp.txt", texts)
    common.save_lines(out / "hyp.scores.txt", scores)
    distinct, stopped = check_not_degenerate(name, ids)

    # The two minimal forms of FORMATS.md 6(a) and 6(b): cfg.model a plain dict, or a Namespace
    # with arch, task and languages added (what CTranslate2's converter needs).
    for form in ("dict", "namespace"):
        state = minimal_plain_state(args, out, model)
        if form == "namespace":
            m = state["cfg"]["model"]
            state["cfg"]["model"] = Namespace(**m, arch=m["_name"], task="translation",
                                              source_lang="en", target_lang="de", data=".")
        path = work / f"{name}.minimal-{form}.pt"
        torch.save(state, path)
        minimal_models, _, minimal_task = load(path, out)
        _, minimal_lprobs = teacher_forced(minimal_models, minimal_task, spm_dir)
        if not np.array_equal(minimal_lprobs, lprobs):
            common.fail(f"{name}: the minimal checkpoint (cfg.model a {form}) gives other "
                        f"log-probs (max diff {abs(minimal_lprobs - lprobs).max()})")
    # Without encoder.version / decoder.version, fairseq's upgrade_state_dict_named takes the
    # checkpoint for a pre-2018 one and drops the final layer norms of pre-norm models.
    unversioned = minimal_plain_state(args, out, model)
    for key in ("encoder.version", "decoder.version"):
        del unversioned["model"][key]
    torch.save(unversioned, work / f"{name}.unversioned.pt")
    loose_models, _, loose_task = load(work / f"{name}.unversioned.pt", out)
    _, loose_lprobs = teacher_forced(loose_models, loose_task, spm_dir)
    return {"arch": variant["arch"], "flags": variant["flags"], "seed": variant["seed"],
            "log_probs_change_without_version_keys": not np.array_equal(loose_lprobs, lprobs),
            "init_scaling": variant["init_scaling"],
            "joined_dictionary": variant["joined"], "distinct_translations": distinct,
            "minimal_checkpoints_load_identically": ["cfg.model a dict", "cfg.model a Namespace"],
            "parameters": sum(p.numel() for p in model.parameters())}


def build(out, fairseq_src, stubbed):
    import tempfile
    import torch
    import fairseq
    spm_dir = common.FIXTURES / "spm"
    if not (spm_dir / "en.model").is_file():
        common.fail(f"{spm_dir}: no SentencePiece models; run make_spm_models.py first")
    with tempfile.TemporaryDirectory(prefix="csan-fairseq-") as tmp:
        work = Path(tmp)
        encode_corpora(work, spm_dir)
        variants = {name: build_variant(out / name, work, spm_dir, name, v)
                    for name, v in VARIANTS.items()}
    common.write_manifest(out, {
        "library": "facebookresearch/fairseq", "commit": common.git_commit(fairseq_src),
        "fairseq_version": fairseq.__version__, "torch": torch.__version__,
        "python": sys.version.split()[0], "stubbed_modules": ["hydra (tools/interop/stubs)"]
        + stubbed, "generation": GENERATION,
        **common.corpus_provenance(),
        "variants": variants})


def main():
    opts = common.parse_fixture_args(
        __doc__, "--fairseq-src", "fairseq source folder (contains fairseq/ and a COMMIT file)")
    if not (opts.fairseq_src / "fairseq" / "checkpoint_utils.py").is_file():
        common.fail(f"{opts.fairseq_src}: not a fairseq source folder "
                    "(no fairseq/checkpoint_utils.py)")
    common.single_threaded_torch()
    stubbed = import_fairseq(opts.fairseq_src.resolve())
    common.build_then_compare(lambda out: build(out, opts.fairseq_src, stubbed),
                              common.FIXTURES / "fairseq", opts.check)


if __name__ == "__main__":
    main()
