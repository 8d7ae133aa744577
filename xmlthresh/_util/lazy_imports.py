"""Modules imported when first used, not when the importing module is (``sp = lazy_module("scipy.sparse")``).

Why: ``scipy.sparse`` is slow to import (its array-API layer imports numpy.f2py), and the
modules that handle score matrices import it at the top; a run on ranked lists (ESP Game, WikiLSHTC) never
touches a sparse matrix but paid for it on every command. :func:`lazy_module` is the standard library's
``importlib.util.LazyLoader`` recipe: the module object is registered at once, its code runs on the first
attribute access (``sp.issparse(x)``, ``sp.csr_matrix``), after which it is the ordinary module.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``: the loaded one when it is already imported, else one that loads on first use."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as the import system does: ``import scipy; scipy.sparse`` finds it
        setattr(sys.modules[parent], child, module)
    return module


def is_loaded(name: str) -> bool:
    """Whether the module ``name`` has run its code (a lazy module that was never used has not)."""
    module = sys.modules.get(name)
    return module is not None and not isinstance(module, importlib.util._LazyModule)  # type: ignore[attr-defined]
