"""A small safetensors (not packaged by Debian) written from its published format, enough for
transformers' save_pretrained / from_pretrained on CPU with torch: an 8-byte little-endian header
length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}} padded
with spaces to a multiple of 8, then the raw little-endian tensor bytes. The real library is used
where it is installed (tools/interop/check-hf-real.py)."""

import json
import struct

__version__ = "0.4.5"

_DTYPES = {"F32": ("float32", 4), "F16": ("float16", 2), "BF16": ("bfloat16", 2),
           "F64": ("float64", 8), "I64": ("int64", 8), "I32": ("int32", 4), "I8": ("int8", 1),
           "U8": ("uint8", 1), "BOOL": ("bool", 1)}


class SafetensorError(Exception):
    pass


def read_header(data, name="<bytes>"):
    if len(data) < 8:
        raise SafetensorError(f"{name}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise SafetensorError(f"{name}: header length {n} runs past the end of the file")
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", None)
    return header, metadata, 8 + n


def tensor_bytes(data, info, start):
    begin, end = info["data_offsets"]
    return data[start + begin:start + end]


class safe_open:
    """The subset transformers uses: keys(), metadata(), get_tensor()."""

    def __init__(self, filename, framework="pt", device="cpu"):
        with open(filename, "rb") as f:
            self._data = f.read()
        self._header, self._metadata, self._start = read_header(self._data, filename)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        return list(self._header)

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        from .torch import _to_tensor
        return _to_tensor(self._header[name], tensor_bytes(self._data, self._header[name],
                                                           self._start))

    def get_slice(self, name):
        return self.get_tensor(name)
