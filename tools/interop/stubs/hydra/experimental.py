"""compose/initialize stand-ins: fairseq calls them only to turn an old argparse Namespace into a
config (convert_namespace_to_omegaconf). The interop scripts never need that path; reaching it
is an error, not a silent fallback."""


def initialize(*args, **kwargs):
    raise NotImplementedError("hydra stub: initialize() is not available (see tools/interop/README.md)")


def compose(*args, **kwargs):
    raise NotImplementedError("hydra stub: compose() is not available (see tools/interop/README.md)")
