"""csan's safetensors files against the format and against Python's safetensors package.

Default: files csan writes (tests/interop/safetensors_probe) are checked by a reader
written here from the format's specification with numpy (header, offsets, alignment,
bytes, csan's checksum); files written here to the specification, in layouts csan does
not write itself, are read by csan.
--library: the same with Python's `safetensors` package (safetensors.numpy and, for BF16
and the 8-bit floats, safetensors.torch): it opens csan's files and csan opens its files.
Both also open real checkpoints (csan-train's, and an int8 one convert-checkpoint writes):
a state dict under the parameters' names with csan's parts (format.h) beside it.
Exits 77 (ctest: skipped) when the package is not installed: Debian bookworm has none.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

PROBE = os.environ.get("CSAN_SAFETENSORS_PROBE", "")

# dtype name -> (numpy dtype of the values, or None where numpy has none, element size)
DTYPES = {
    "BOOL": (np.bool_, 1), "U8": (np.uint8, 1), "I8": (np.int8, 1), "F8_E5M2": (None, 1), "F8_E4M3": (None, 1),
    "I16": (np.int16, 2), "U16": (np.uint16, 2), "F16": (np.float16, 2), "BF16": (None, 2),
    "I32": (np.int32, 4), "U32": (np.uint32, 4), "F32": (np.float32, 4),
    "I64": (np.int64, 8), "U64": (np.uint64, 8), "F64": (np.float64, 8),
}
CHECKSUM_PREFIX = b'{"__metadata__":{"csan.crc32c":"'
METADATA = {"task": "translation", "recipe": "model:\n  arch: transformer_base\n", "unicode": "Grüße, 東京 \U0001F600",
            "empty": "", "quotes": "\"'\\\t"}


def crc32c(data):
    table = crc32c.table
    if table is None:
        table = crc32c.table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
    c = 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


crc32c.table = None


def sample_tensors():
    """name -> (dtype name, shape, little-endian bytes): every dtype, with scalars and empty tensors."""
    rng = np.random.default_rng(37)
    tensors = {}
    for name, (np_dtype, size) in DTYPES.items():
        for suffix, shape in ((".matrix", (3, 5)), (".scalar", ()), (".empty", (0, 4)), (".odd", (7,))):
            count = int(np.prod(shape, dtype=np.int64))
            if np_dtype is np.bool_:
                values = rng.integers(0, 2, count).astype(np.bool_)
            elif np_dtype is not None and np.issubdtype(np_dtype, np.floating):
                values = rng.standard_normal(count).astype(np_dtype)
            elif np_dtype is not None:
                info = np.iinfo(np_dtype)
                values = rng.integers(info.min, info.max, count, dtype=np_dtype, endpoint=True)
            else:  # no numpy type: raw bytes
                values = rng.integers(0, 256, count * size, dtype=np.uint8)
            tensors[name.lower() + suffix] = (name, list(shape), values.astype(values.dtype.newbyteorder("<")).tobytes())
    return tensors


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %s" % keys)
    return dict(pairs)


def read_to_spec(path):
    """The file read by the format's rules alone; every rule is asserted. Returns (metadata,
    {name: (dtype, shape, bytes, file offset)}, header length)."""
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) >= 8, "shorter than the header length"
    (n,) = struct.unpack("<Q", data[:8])
    assert 2 <= n <= 100_000_000 and 8 + n <= len(data), n
    header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=no_duplicates)
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    region = 8 + n
    covered = 0
    tensors = {}
    for name, info in sorted(header.items(), key=lambda item: tuple(item[1]["data_offsets"])):
        begin, end = info["data_offsets"]
        assert begin == covered, "%s starts at %d, the previous tensor ends at %d" % (name, begin, covered)
        size = DTYPES[info["dtype"]][1]
        assert end - begin == size * int(np.prod(info["shape"], dtype=np.int64)), name
        tensors[name] = (info["dtype"], list(info["shape"]), data[region + begin:region + end], region + begin)
        covered = end
    assert region + covered == len(data), "bytes after the last tensor"
    return metadata, tensors, n, data


def values(dtype, shape, raw):
    np_dtype = DTYPES[dtype][0]
    return np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder("<")).reshape(shape)


class Probe:
    def __init__(self, test):
        self.test = test
        self.dir = tempfile.mkdtemp(prefix="csan-safetensors-interop-")
        test.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, tensors, metadata, streamed=()):
        spec = {"metadata": metadata,
                "tensors": [{"name": k, "dtype": d, "shape": s, "hex": b.hex(), "streamed": k in streamed}
                            for k, (d, s, b) in tensors.items()]}
        spec_path = self.path(name + ".json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f, ensure_ascii=False)
        out = self.path(name)
        r = subprocess.run([PROBE, "write", out, spec_path], capture_output=True, text=True)
        self.test.assertEqual(r.returncode, 0, r.stderr)
        return out

    def dump(self, path, *flags):
        r = subprocess.run([PROBE, "dump", path, *flags], capture_output=True, text=True)
        self.test.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def refuse(self, path, *flags):
        r = subprocess.run([PROBE, "dump", path, *flags], capture_output=True, text=True)
        self.test.assertEqual(r.returncode, 1, r.stdout)
        self.test.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.test.assertTrue(r.stderr.startswith("safetensors_probe: error: " + path + ": "), r.stderr)
        return r.stderr.strip()

    def assert_read_as(self, path, tensors, metadata, **flags):
        dumped = self.dump(path, *(["--require-checksum"] if flags.get("require_checksum") else []))
        self.test.assertEqual(dumped["metadata"], metadata)
        got = {t["name"]: (t["dtype"], t["shape"], bytes.fromhex(t["hex"])) for t in dumped["tensors"]}
        self.test.assertEqual(got, tensors)
        return dumped


def write_to_spec(path, tensors, metadata, order, separators=(",", ":"), pad_to=1, leading=b"", metadata_last=False):
    """A file written by the format's rules, tensors laid out in `order`."""
    header, offset, blobs = {}, 0, []
    if metadata is not None and not metadata_last:
        header["__metadata__"] = metadata
    for name in order:
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    if metadata is not None and metadata_last:
        header["__metadata__"] = metadata
    text = leading + json.dumps(header, separators=separators, ensure_ascii=False).encode("utf-8")
    text += b" " * ((-(8 + len(text))) % pad_to)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def safetensors_order(tensors):
    """The order Python's safetensors lays tensors out in: decreasing rank in its Dtype enum
    (which orders by alignment), then name."""
    package_enum = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
                    "F64", "I64", "U64"]
    return sorted(tensors, key=lambda name: (-package_enum.index(tensors[name][0]), name))


class SpecTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(PROBE and os.path.exists(PROBE), "CSAN_SAFETENSORS_PROBE must name the probe")
        self.probe = Probe(self)
        self.tensors = sample_tensors()

    def test_files_csan_writes_follow_the_format_byte_for_byte(self):
        streamed = [name for name in self.tensors if name.endswith(".matrix")]
        path = self.probe.write("csan.safetensors", self.tensors, METADATA, streamed=streamed)
        metadata, read, n, data = read_to_spec(path)
        checksum = metadata.pop("csan.crc32c")
        self.assertEqual(metadata, METADATA)
        self.assertEqual({k: v[:3] for k, v in read.items()}, self.tensors)
        for name, (dtype, shape, raw, _) in read.items():
            if DTYPES[dtype][0] is not None:
                original = values(*self.tensors[name])
                np.testing.assert_array_equal(values(dtype, shape, raw), original)
        # Laid out for use in place: data at a multiple of 64, each tensor at a multiple of
        # its element size, largest elements first, the header padded with spaces.
        self.assertEqual((8 + n) % 64, 0)
        text = data[8:8 + n]
        self.assertTrue(text.startswith(CHECKSUM_PREFIX), text[:40])
        self.assertEqual(text[len(text.rstrip(b" ")):], b" " * (len(text) - len(text.rstrip(b" "))))
        by_offset = sorted(read, key=lambda name: read[name][3])
        for name in by_offset:
            self.assertEqual(read[name][3] % DTYPES[read[name][0]][1], 0, name)
        sizes = [DTYPES[read[name][0]][1] for name in by_offset]
        self.assertEqual(sizes, sorted(sizes, reverse=True))
        # The checksum: CRC-32C of the file with its own eight digits as zeros.
        at = 8 + len(CHECKSUM_PREFIX)
        self.assertEqual(data[at:at + 8].decode(), checksum)
        self.assertEqual("%08x" % crc32c(data[:at] + b"00000000" + data[at + 8:]), checksum)

    def test_csan_reads_files_written_to_the_format_in_other_layouts(self):
        names = list(self.tensors)
        layouts = {
            "safetensors-like.safetensors": dict(order=safetensors_order(self.tensors), pad_to=8),
            "insertion-order.safetensors": dict(order=names, separators=(", ", ": "), metadata_last=True),
            "reversed-leading-space.safetensors": dict(order=names[::-1], leading=b"  \n", pad_to=3),
        }
        for name, layout in layouts.items():
            path = self.probe.path(name)
            write_to_spec(path, self.tensors, METADATA, **layout)
            dumped = self.probe.assert_read_as(path, self.tensors, METADATA)
            self.assertFalse(dumped["checksummed"], name)
            self.assertIn("has no csan checksum", self.probe.refuse(path, "--require-checksum"))
        # No metadata map at all, and no tensors at all.
        path = self.probe.path("no-metadata.safetensors")
        write_to_spec(path, self.tensors, None, order=names)
        self.probe.assert_read_as(path, self.tensors, {})
        path = self.probe.path("empty.safetensors")
        write_to_spec(path, {}, None, order=[])
        self.probe.assert_read_as(path, {}, {})

    def test_a_file_damaged_after_csan_wrote_it_is_one_line_naming_it(self):
        path = self.probe.write("damaged.safetensors", self.tensors, METADATA)
        with open(path, "r+b") as f:
            f.seek(-3, os.SEEK_END)
            byte = f.read(1)
            f.seek(-3, os.SEEK_END)
            f.write(bytes([byte[0] ^ 0x10]))
        self.assertIn(": checksum mismatch (stored crc32c ", self.probe.refuse(path))


# Real checkpoints: csan-train's (format 3, from the format 2 fixture's data) and an int8
# inference checkpoint convert-checkpoint writes from it.
SOURCE = os.environ.get("CSAN_SOURCE_DIR", "")
TRAIN = os.environ.get("CSAN_TRAIN", "")
CONVERT = os.environ.get("CSAN_CONVERT_CHECKPOINT", "")


def real_checkpoints():
    """(training checkpoint, int8 checkpoint, data dir), made once per process."""
    if real_checkpoints.made is None:
        for name, value in (("CSAN_SOURCE_DIR", SOURCE), ("CSAN_TRAIN", TRAIN), ("CSAN_CONVERT_CHECKPOINT", CONVERT)):
            assert value and os.path.exists(value), "%s must name it" % name
        work = tempfile.mkdtemp(prefix="csan-checkpoint-interop-")
        data = os.path.join(work, "bin")
        shutil.copytree(os.path.join(SOURCE, "tests/data/format2-tiny/bin"), data)
        save = os.path.join(work, "save")
        subprocess.run([TRAIN, os.path.join(SOURCE, "recipes/tiny-transformer.yaml"), "--data", data, "--save-dir", save,
                        "--max-tokens", "512", "--max-update", "2", "--set", "model.embed_dim=16", "--set",
                        "model.ffn_dim=32", "--set", "model.heads=2", "--set", "model.encoder_layers=1", "--set",
                        "model.decoder_layers=1"], check=True, capture_output=True)
        training = os.path.join(save, "checkpoint_last.pt")
        int8 = os.path.join(work, "model.int8.pt")
        subprocess.run([CONVERT, "--input", training, "--output", int8, "--precision", "int8"], check=True,
                       capture_output=True)
        real_checkpoints.made = (training, int8, data)
    return real_checkpoints.made


real_checkpoints.made = None


def model_names(tensors):
    prefixes = ("optimizer.", "section.", "rng.", "meta.")
    return sorted(n for n in tensors if not n.startswith(prefixes))


class CheckpointSpecTest(unittest.TestCase):
    """csan's checkpoints read by the format's rules alone: a state dict plus csan's parts."""

    def test_a_training_checkpoint_is_a_state_dict_with_csans_parts(self):
        training, _, data = real_checkpoints()
        metadata, tensors, n, raw = read_to_spec(training)
        self.assertEqual((8 + n) % 64, 0)
        stored = metadata.pop("csan.crc32c")
        blank = raw[:8 + len(CHECKSUM_PREFIX)] + b"0" * 8 + raw[8 + len(CHECKSUM_PREFIX) + 8:]
        self.assertEqual(stored, "%08x" % crc32c(blank))
        self.assertEqual(metadata["csan.format"], "3")
        self.assertEqual(metadata["csan.task"], "translation")
        self.assertIn("arch: transformer_tiny", metadata["csan.recipe"])
        progress = json.loads(metadata["csan.progress"])
        self.assertEqual(progress["num_updates"], 2)
        with open(os.path.join(data, "dict.src.txt"), encoding="utf-8") as f:
            self.assertEqual(metadata["csan.data.src_dict"], f.read())
        with open(os.path.join(data, "spm.model"), "rb") as f:
            self.assertEqual(tensors["meta.data.spm_model"][2], f.read())
        self.assertEqual(tensors["rng.cpu"][0], "U8")
        names = model_names(tensors)
        self.assertIn("encoder.embed_tokens.weight", names)
        for name in names:
            dtype, shape, payload, offset = tensors[name]
            self.assertEqual(offset % DTYPES[dtype][1], 0, name)
        # Adam's state under each trained parameter's name, shaped like it; step an I64 scalar.
        optimizer = json.loads(metadata["csan.optimizer"])
        self.assertEqual(optimizer["name"], "adam")
        params = optimizer["param_groups"][0]["params"]
        self.assertTrue(set(params) <= set(names))
        for name in params:
            self.assertEqual(tensors["optimizer.%s.exp_avg" % name][:2], tensors[name][:2], name)
            self.assertEqual(tensors["optimizer.%s.exp_avg_sq" % name][:2], tensors[name][:2], name)
            step = tensors["optimizer.%s.step" % name]
            self.assertEqual(step[:2], ("I64", []))
            self.assertEqual(values(*step[:3]), 2)

    def test_an_int8_checkpoint_stores_int8_rows_with_their_scales(self):
        training, int8, _ = real_checkpoints()
        _, fp32, _, _ = read_to_spec(training)
        metadata, tensors, _, _ = read_to_spec(int8)
        self.assertEqual(metadata["csan.data.inference_precision"], "int8")
        quantized = [n for n in model_names(tensors) if tensors[n][0] == "I8"]
        self.assertGreater(len(quantized), 3)
        self.assertFalse([n for n in tensors if n.startswith("optimizer.")])
        for name in quantized:
            rows = values(*tensors[name][:3]).astype(np.float64)
            scale = tensors["section.int8_scales." + name]
            self.assertEqual(scale[:2], ("F32", [rows.shape[0]]), name)
            scales = values(*scale[:3]).astype(np.float64)
            weight = values(*fp32[name][:3]).astype(np.float64)
            # Per-row symmetric quantization: within half a step of the fp32 weight.
            self.assertLessEqual(np.max(np.abs(rows * scales[:, None] - weight) - scales[:, None] / 2), 1e-6, name)


class LibraryTest(unittest.TestCase):
    """Python's safetensors package reads csan's files, and csan reads the package's."""

    def setUp(self):
        import safetensors.numpy  # noqa: F401 (skipped before this when missing)
        self.probe = Probe(self)
        self.tensors = sample_tensors()

    def numpy_tensors(self):
        return {k: v for k, v in self.tensors.items() if DTYPES[v[0]][0] is not None}

    def test_the_package_opens_csan_files(self):
        from safetensors import safe_open
        from safetensors.numpy import load_file
        path = self.probe.write("csan-numpy.safetensors", self.numpy_tensors(), METADATA)
        loaded = load_file(path)
        self.assertEqual(set(loaded), set(self.numpy_tensors()))
        for name, (dtype, shape, raw) in self.numpy_tensors().items():
            self.assertEqual(list(loaded[name].shape), shape, name)
            np.testing.assert_array_equal(loaded[name], values(dtype, shape, raw), name)
        with safe_open(path, framework="np") as f:
            metadata = f.metadata()
        self.assertEqual({k: v for k, v in metadata.items() if k != "csan.crc32c"}, METADATA)

    def test_the_package_opens_bf16_and_8_bit_float_tensors_of_csan_files(self):
        try:
            import torch
            from safetensors.torch import load_file
        except ImportError as e:
            self.skipTest("safetensors.torch needs torch: %s" % e)
        raw_types = {"BF16": torch.int16}
        for name, torch_dtype in (("F8_E5M2", "float8_e5m2"), ("F8_E4M3", "float8_e4m3fn")):
            if hasattr(torch, torch_dtype):
                raw_types[name] = torch.uint8
        tensors = {k: v for k, v in self.tensors.items() if v[0] in raw_types}
        path = self.probe.write("csan-torch.safetensors", tensors, METADATA)
        loaded = load_file(path)
        self.assertEqual(set(loaded), set(tensors))
        for name, (dtype, shape, raw) in tensors.items():
            self.assertEqual(list(loaded[name].shape), shape, name)
            self.assertEqual(loaded[name].contiguous().view(raw_types[dtype]).numpy().tobytes(), raw, name)
        print("BF16/8-bit floats compared with safetensors.torch: %s" % ", ".join(sorted(raw_types)))

    def test_the_package_opens_csan_checkpoints(self):
        from safetensors import safe_open
        from safetensors.numpy import load_file
        for path in real_checkpoints()[:2]:
            metadata, tensors, _, _ = read_to_spec(path)
            loaded = load_file(path)
            self.assertEqual(set(loaded), set(tensors), path)
            for name, (dtype, shape, raw, _) in tensors.items():
                np.testing.assert_array_equal(loaded[name], values(dtype, shape, raw), name)
            with safe_open(path, framework="np") as f:
                self.assertEqual(f.metadata(), metadata)
                self.assertEqual(sorted(f.keys()), sorted(tensors))

    def test_csan_reads_files_the_package_writes(self):
        from safetensors.numpy import save_file
        tensors = self.numpy_tensors()
        arrays = {name: values(*t).copy() for name, t in tensors.items()}
        path = self.probe.path("package.safetensors")
        save_file(arrays, path, metadata=METADATA)
        dumped = self.probe.assert_read_as(path, tensors, METADATA)
        self.assertFalse(dumped["checksummed"])
        save_file(arrays, path)
        self.probe.assert_read_as(path, tensors, {})


if __name__ == "__main__":
    if "--library" in sys.argv:
        sys.argv.remove("--library")
        try:
            import safetensors
        except ImportError:
            print("skipped: Python's safetensors package is not installed (not in Debian bookworm; "
                  "the GPU machine has it)")
            sys.exit(77)
        print("safetensors %s, numpy %s" % (safetensors.__version__, np.__version__))
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(LibraryTest)
    else:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(SpecTest)
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(CheckpointSpecTest))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
