"""The scikit-learn parameter protocol (``get_params``, ``set_params``, a ``repr`` of the
changed parameters, tags) without depending on scikit-learn: the constructor's arguments are
the parameters, stored unchanged as attributes of the same names."""

from __future__ import annotations

import inspect

import numpy as np


class ParameterProtocol:
    """Base class of estimators whose ``__init__`` only stores its arguments."""

    def __new__(cls, *args, **kwargs):
        unknown = [name for name in kwargs if name not in cls._param_names()]
        if unknown:
            raise TypeError(_unknown_message(cls, unknown[0]))
        return super().__new__(cls)

    @classmethod
    def _param_names(cls) -> list[str]:
        return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]

    def get_params(self, deep: bool = True) -> dict:
        """The constructor parameters as a dict."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> "ParameterProtocol":
        """Set constructor parameters; unknown names raise ``ValueError``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(_unknown_message(type(self), name))
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = inspect.signature(type(self).__init__).parameters
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not _same(v, defaults[k].default)]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    requires_fit=True, non_deterministic=getattr(self, "seed", None) is None)


def _unknown_message(cls, name: str) -> str:
    """Why ``name`` is not a parameter of ``cls``: where it moved (a field of one of
    ``prodag.config.parameters.GROUPS``, e.g. ``TrainingOptions``), else the valid names."""
    from dataclasses import fields

    from prodag.config.parameters import GROUPS

    for group, options in GROUPS.items():
        if name in {field.name for field in fields(options)}:
            return (f"{name!r} is not a {cls.__name__} parameter: it is an option of "
                    f"{options.__name__}; write {cls.__name__}({group}={options.__name__}"
                    f"({name}=...)).")
    return f"{name!r} is not a {cls.__name__} parameter; valid ones: {cls._param_names()}."


def _same(a, b) -> bool:
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except Exception:
        return False
