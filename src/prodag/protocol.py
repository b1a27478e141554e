"""The scikit-learn parameter protocol (``get_params``, ``set_params``, a ``repr`` of the
changed parameters, tags) without depending on scikit-learn: the constructor's arguments are
the parameters, stored unchanged as attributes of the same names."""

from __future__ import annotations

import inspect

import numpy as np


class ParameterProtocol:
    """Base class of estimators whose ``__init__`` only stores its arguments."""

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
                raise ValueError(f"{name!r} is not a {type(self).__name__} parameter; valid "
                                 f"ones: {valid}.")
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


def _same(a, b) -> bool:
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except Exception:
        return False
