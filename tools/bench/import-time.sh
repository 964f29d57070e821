#!/usr/bin/env bash
# Import speed (issue 37, part 5: "a transformer_big checkpoint imports in at most 2x the
# time to read its files"): writes a random fairseq checkpoint with fairseq's layout and
# transformer_vaswani_wmt_en_de_big's sizes (6+6 layers, d 1024, FFN 4096, 16 heads, joined
# 32768-entry dictionary, share_all_embeddings; about 1 GB of float32) with Debian's
# /usr/bin/python3 + python3-torch, then times, ROUNDS times alternating:
#   read:   cat checkpoint.pt dict.*.txt > /dev/null
#   read16: the same files read in 16 MiB requests (dd bs=16M): the disk's own speed, which
#           cat's 128 KiB reads reach only sometimes on these VMs (0.25-1.4 s for 801 MiB)
#   copy:   cp checkpoint.pt copy.pt && sync copy.pt (reading the bytes and writing as many
#           to disk: what any import that writes its model to a file pays at least)
#   import: csan-import --fairseq checkpoint.pt --output imported.pt (which syncs its file)
# and prints the medians and the import's ratios to both. The files are in the page cache after the first
# round, so "read" is a warm read. COLD=1: the input files are dropped from the page cache
# (`dd iflag=nocache count=0`, which needs no privileges) before each of the three, so that each
# reads them from the disk: "read" is then the time to read the files in the goal's sense.
# csan-import's time includes starting the process (LibTorch) and writing the format 3 file.
#   [COLD=1] tools/bench/import-time.sh [WORK_DIR] [ROUNDS]
# WORK_DIR (default: a fresh temporary folder) needs about 3 GB; CSAN_BUILD_DIR as elsewhere.
# Do not run it while other builds or benchmarks share the machine.
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${CSAN_BUILD_DIR:-$root/build}
work=${1:-$(mktemp -d /tmp/csan-import-time.XXXXXX)}
rounds=${2:-5}
mkdir -p "$work"
if [[ ! -f $work/checkpoint.pt ]]; then
  /usr/bin/python3 - "$work" <<'PY'
import argparse, sys, torch
work = sys.argv[1]
d, ffn, layers, vocab = 1024, 4096, 6, 32768
torch.manual_seed(1)
with open(f"{work}/dict.en.txt", "w") as f:
    for i in range(vocab - 4):
        f.write(f"w{i} 1\n")
import shutil
shutil.copy(f"{work}/dict.en.txt", f"{work}/dict.de.txt")
model = {}
def linear(name, rows, cols):
    model[name + ".weight"] = torch.randn(rows, cols) * 0.02
    model[name + ".bias"] = torch.zeros(rows)
def norm(name):
    model[name + ".weight"] = torch.ones(d)
    model[name + ".bias"] = torch.zeros(d)
embed = torch.randn(vocab, d) * 0.02
model["encoder.version"] = torch.tensor([3.0])
model["encoder.embed_tokens.weight"] = embed
for side in ("encoder", "decoder"):
    for i in range(layers):
        p = f"{side}.layers.{i}."
        attentions = ["self_attn"] + (["encoder_attn"] if side == "decoder" else [])
        for a in attentions:
            for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
                linear(p + a + "." + proj, d, d)
            norm(p + a + "_layer_norm")
        linear(p + "fc1", ffn, d)
        linear(p + "fc2", d, ffn)
        norm(p + "final_layer_norm")
model["decoder.version"] = torch.tensor([3.0])
model["decoder.embed_tokens.weight"] = embed
model["decoder.output_projection.weight"] = embed
args = argparse.Namespace(arch="transformer_vaswani_wmt_en_de_big", _name="transformer_vaswani_wmt_en_de_big",
                          encoder_embed_dim=d, encoder_ffn_embed_dim=ffn, encoder_layers=layers,
                          encoder_attention_heads=16, decoder_embed_dim=d, decoder_ffn_embed_dim=ffn,
                          decoder_layers=layers, decoder_attention_heads=16, share_all_embeddings=True,
                          share_decoder_input_output_embed=True, dropout=0.3, max_source_positions=1024,
                          max_target_positions=1024, source_lang="en", target_lang="de")
torch.save({"args": None, "cfg": {"model": args, "task": {"_name": "translation", "source_lang": "en",
            "target_lang": "de"}}, "model": model, "optimizer_history": [{"lr_scheduler_state": {}}],
            "extra_state": {}}, f"{work}/checkpoint.pt")
PY
fi
now() { date +%s.%N; }
inputs=("$work/checkpoint.pt" "$work/dict.en.txt" "$work/dict.de.txt")
cold=${COLD:-0}
[[ $cold == 0 || $cold == 1 ]] || { echo "import-time.sh: COLD must be 0 or 1, not '$cold'" >&2; exit 2; }
uncache() {  # COLD=1: the next reader finds the inputs on disk only
  if ((cold)); then
    for f in "${inputs[@]}"; do dd if="$f" iflag=nocache count=0 status=none; done
  fi
}
reads=() big_reads=() copies=() imports=()
for ((r = 0; r < rounds; r++)); do
  uncache
  t0=$(now)
  cat "$work/checkpoint.pt" "$work/dict.en.txt" "$work/dict.de.txt" >/dev/null
  t_cat=$(now)
  uncache
  t5=$(now)
  for f in "${inputs[@]}"; do dd if="$f" of=/dev/null bs=16M status=none; done
  t6=$(now)
  rm -f "$work/imported.pt"  # as cp's target below: dropping an old file's pages is not the import's cost
  uncache
  t1=$(now)
  "$build/cli/csan-import" --fairseq "$work/checkpoint.pt" --output "$work/imported.pt" 2>/dev/null
  t2=$(now)
  rm -f "$work/copy.pt"
  uncache
  t3=$(now)
  cp "$work/checkpoint.pt" "$work/copy.pt" && sync "$work/copy.pt"
  t4=$(now)
  reads+=("$(echo "$t_cat - $t0" | bc)")
  big_reads+=("$(echo "$t6 - $t5" | bc)")
  imports+=("$(echo "$t2 - $t1" | bc)")
  copies+=("$(echo "$t4 - $t3" | bc)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
read_s=$(median "${reads[@]}")
big_read_s=$(median "${big_reads[@]}")
import_s=$(median "${imports[@]}")
copy_s=$(median "${copies[@]}")
echo "checkpoint: $work/checkpoint.pt ($(du -m "$work/checkpoint.pt" | cut -f1) MiB), $rounds rounds"
cache=$( ((cold)) && echo "cold, from disk" || echo "warm page cache")
printf 'read (cat, %s): %.3f s\nread (16 MiB requests):      %.3f s\ncopy (cp + sync):            %.3f s\ncsan-import:                 %.3f s\n' \
  "$cache" "$read_s" "$big_read_s" "$copy_s" "$import_s"
printf 'import / read:               %.2fx (goal: at most 2x)\nimport / read in 16 MiB:     %.2fx\nimport / copy:               %.2fx\n' \
  "$(echo "$import_s / $read_s" | bc -l)" "$(echo "$import_s / $big_read_s" | bc -l)" "$(echo "$import_s / $copy_s" | bc -l)"
