"""The scikit-learn estimator protocol for strategies, without importing scikit-learn.

``import sklearn.base`` (or anything of scikit-learn) costs more CPU than a whole ranked-list run needs
otherwise (``benchmarks/cli.py`` times the commands). A strategy only needs what
:class:`sklearn.base.BaseEstimator` gives a plain estimator: ``get_params`` / ``set_params`` (so ``clone``,
``GridSearchCV`` and pipelines work), a readable ``repr`` and the estimator tags, and the ``NotFittedError``
scikit-learn users catch. Those are here, and scikit-learn is imported only when scikit-learn itself calls in
(``__sklearn_tags__``) or when an error is raised -- by then it is loaded anyway or the cost no longer matters.
"""

from __future__ import annotations

import inspect
from typing import Any


class EstimatorParams:
    """``get_params`` / ``set_params`` / ``repr`` / tags with scikit-learn's semantics: the parameters are the
    keyword arguments of ``__init__``, stored under the same names."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        parameters = [p for p in inspect.signature(init).parameters.values() if p.name != "self"]
        for parameter in parameters:
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise RuntimeError(f"{cls.__name__}: estimator parameters are explicit keyword arguments "
                                   f"(no *args / **kwargs): {parameter}")
        return sorted(p.name for p in parameters)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters and their values (``deep``: also ``name__sub`` of estimator values)."""
        out: dict[str, Any] = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{key}", item) for key, item in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params: Any) -> "EstimatorParams":
        """Set parameters (``name__sub`` reaches into an estimator value); an unknown name is an error."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self}. Valid parameters are: "
                                 f"{sorted(self._get_param_names())!r}.")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def unfitted_copy(self) -> "EstimatorParams":
        """A new estimator with the same parameters (what ``sklearn.base.clone`` gives)."""
        return type(self)(**self.get_params(deep=False))

    def __repr__(self) -> str:
        """``Name(param=value, ...)`` with the parameters that differ from their defaults (as scikit-learn)."""
        defaults = {key: p.default for key, p in inspect.signature(type(self).__init__).parameters.items()
                    if p.default is not p.empty}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            if name not in defaults or not _same(value, defaults[name]):
                changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self) -> Any:
        """The tags of a plain scikit-learn estimator (scikit-learn is loaded when it asks for them)."""
        from sklearn.base import BaseEstimator

        return BaseEstimator.__sklearn_tags__(self)


def not_fitted(message: str) -> Exception:
    """scikit-learn's ``NotFittedError`` with ``message`` (imported when raised: the class users catch)."""
    from sklearn.exceptions import NotFittedError

    return NotFittedError(message)


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value is default or value == default)
    except Exception:  # arrays and other values without a plain truth value
        return False
