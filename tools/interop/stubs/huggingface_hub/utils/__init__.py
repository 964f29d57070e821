"""huggingface_hub.utils stand-in: its exception types (transformers catches them), progress-bar
switches (read by transformers' logging at import) and a raising placeholder for the rest."""


class HfHubHTTPError(Exception):
    pass


class EntryNotFoundError(HfHubHTTPError):
    pass


class LocalEntryNotFoundError(EntryNotFoundError):
    pass


class RepositoryNotFoundError(HfHubHTTPError):
    pass


class GatedRepoError(RepositoryNotFoundError):
    pass


class RevisionNotFoundError(HfHubHTTPError):
    pass


class HFValidationError(ValueError):
    pass


class OfflineModeIsEnabled(ConnectionError):
    pass


_progress_bars_disabled = True


def are_progress_bars_disabled(name=None):
    return _progress_bars_disabled


def disable_progress_bars(name=None):
    global _progress_bars_disabled
    _progress_bars_disabled = True


def enable_progress_bars(name=None):
    global _progress_bars_disabled
    _progress_bars_disabled = False


def _unavailable(qualified_name):
    def call(*args, **kwargs):
        raise OfflineModeIsEnabled(f"interop stub: {qualified_name} needs the Hugging Face Hub, "
                                   "which these scripts never use")
    call.__name__ = qualified_name.rsplit(".", 1)[-1]
    return call


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _unavailable(f"huggingface_hub.utils.{name}")
