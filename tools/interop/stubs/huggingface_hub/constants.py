"""Offline, no telemetry: the values transformers reads at import time."""
import os

HF_HOME = os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
HF_HUB_CACHE = os.path.join(HF_HOME, "hub")
HUGGINGFACE_HUB_CACHE = HF_HUB_CACHE
HF_HUB_OFFLINE = True
HF_HUB_DISABLE_TELEMETRY = True
ENDPOINT = "https://huggingface.co"
HUGGINGFACE_CO_RESOLVE_ENDPOINT = ENDPOINT
HF_TOKEN_PATH = os.path.join(HF_HOME, "token")
HF_HUB_ENABLE_HF_TRANSFER = False
default_cache_path = HF_HUB_CACHE
