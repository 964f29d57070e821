"""safetensors.torch stand-in: save_file, load_file, and the storage helpers transformers'
pytorch_utils imports."""

import json
import struct

import torch

from . import read_header, tensor_bytes

_TORCH = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
          torch.float64: "F64", torch.int64: "I64", torch.int32: "I32", torch.int8: "I8",
          torch.uint8: "U8", torch.bool: "BOOL"}
_FROM = {v: k for k, v in _TORCH.items()}


def storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except (AttributeError, NotImplementedError):
        return tensor.storage().data_ptr()


def storage_size(tensor):
    try:
        return tensor.untyped_storage().nbytes()
    except (AttributeError, NotImplementedError):
        return tensor.storage().size() * tensor.element_size()


def _raw(tensor):
    t = tensor.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def save(tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        raw = _raw(t)
        header[name] = {"dtype": _TORCH[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header = {"__metadata__": metadata, **header}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def save_file(tensors, filename, metadata=None):
    with open(filename, "wb") as f:
        f.write(save(tensors, metadata))


def _to_tensor(info, raw):
    dtype = _FROM[info["dtype"]]
    if dtype == torch.bfloat16:
        t = torch.frombuffer(bytearray(raw), dtype=torch.int16).view(torch.bfloat16)
    else:
        t = torch.frombuffer(bytearray(raw), dtype=dtype) if raw else torch.empty(0, dtype=dtype)
    return t.reshape(info["shape"]).clone()


def load(data):
    header, _, start = read_header(data)
    return {k: _to_tensor(v, tensor_bytes(data, v, start)) for k, v in header.items()}


def load_file(filename, device="cpu"):
    with open(filename, "rb") as f:
        return load(f.read())
