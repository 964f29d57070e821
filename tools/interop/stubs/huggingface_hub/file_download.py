import re

from .utils import _unavailable

REGEX_COMMIT_HASH = re.compile(r"^[0-9a-f]{40}$")
http_get = _unavailable("huggingface_hub.file_download.http_get")
_create_relative_symlink = _unavailable("huggingface_hub.file_download._create_relative_symlink")
