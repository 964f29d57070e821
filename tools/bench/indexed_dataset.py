"""fairseq's mmap indexed dataset (.idx/.bin), as csan-preprocess writes it, for the
PyTorch reference benchmarks (pytorch-reference-train.py, pytorch-reference-generate.py)."""
import struct
import sys

import numpy as np

DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 8: np.uint16}


def read_indexed(prefix):
    """PREFIX.idx/.bin -> a list of int64 token arrays, one per example."""
    with open(prefix + ".idx", "rb") as f:
        if f.read(9) != b"MMIDIDX\x00\x00":
            sys.exit(prefix + ".idx: not an mmap indexed dataset")
        f.read(8)  # version
        (code,) = struct.unpack("<B", f.read(1))
        (count,) = struct.unpack("<Q", f.read(8))
        f.read(8)  # document count
        sizes = np.frombuffer(f.read(4 * count), dtype=np.int32)
        pointers = np.frombuffer(f.read(8 * count), dtype=np.int64)
    if code not in DTYPES:
        sys.exit(prefix + ".idx: unknown token dtype code %d" % code)
    data = np.fromfile(prefix + ".bin", dtype=DTYPES[code])
    width = np.dtype(DTYPES[code]).itemsize
    return [data[p // width : p // width + s].astype(np.int64) for p, s in zip(pointers, sizes)]
