"""Lets fairseq's config dataclasses import on Python 3.11.

fairseq (fairseq/dataclass/configs.py) declares fields such as `common: CommonConfig =
CommonConfig()`; Python 3.11's dataclasses refuse an unhashable instance as a default
("mutable default ... use default_factory"). Importing this module first wraps
dataclasses._get_field so that such a default becomes a default_factory returning a deep copy,
which is what fairseq's own later releases do by hand. Nothing else changes."""

import copy
import dataclasses

_original_get_field = dataclasses._get_field


def _is_instance_default(value):
    return (value is not dataclasses.MISSING and dataclasses.is_dataclass(value)
            and not isinstance(value, type) and type(value).__hash__ is None)


def _get_field(cls, name, annotation, *rest):
    declared = cls.__dict__.get(name, dataclasses.MISSING)
    value = declared.default if isinstance(declared, dataclasses.Field) else declared
    if _is_instance_default(value):
        factory = lambda v=value: copy.deepcopy(v)  # noqa: E731
        if isinstance(declared, dataclasses.Field):
            declared.default = dataclasses.MISSING
            declared.default_factory = factory
        else:
            setattr(cls, name, dataclasses.field(default_factory=factory))
    return _original_get_field(cls, name, annotation, *rest)


dataclasses._get_field = _get_field
