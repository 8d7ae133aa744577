"""Name -> class registries for the pluggable concepts (strategies, datasets, rankers, CDE estimators and
data sets), and the one path from configuration to object: :meth:`Registry.build`.

A plugin registers itself with a decorator; the CLI and users look it up by the same name that names its
YAML option (``xmlthresh/conf/strategy/domain.yaml`` <-> ``@STRATEGIES.register("domain")``).

Registries discover their modules: a registry made with ``package="xmlthresh.strategies"`` imports
``xmlthresh.strategies.<name>`` when asked for ``name`` (the convention: one module per plugin, named like
it), and every public module of the package when it is listed or a name is not found that way. A new
strategy is therefore one module and one YAML; no import list to edit. Plugins from outside the package
(folders, entry points) register when :func:`xmlthresh.config.plugins.load_plugins` imports them.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import numbers
import pkgutil
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Mapping, TypeVar

from xmlthresh._util.errors import InputError
from xmlthresh._util.typed_params import ParameterTypeError, typed_params

T = TypeVar("T")

#: modules of a plugin package that hold no plugin (the contract, the registry itself); ``_private`` modules
#: (numba kernels) are skipped too
NOT_PLUGIN_MODULES = frozenset({"base", "registry"})


class UnknownNameError(InputError, KeyError):
    """Raised when a registry is asked for a name it does not hold; the message lists the known names.

    An :class:`InputError` (so a ``ValueError``, like every other bad input of the library) and a ``KeyError``
    (what a lookup by name raises), so either ``except`` clause catches it."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain sentence.
        return str(self.args[0])


class ConfigError(InputError):
    """A configuration that names an unknown parameter, misses a required one or gives one an invalid value."""


#: OmegaConf's mark of a mandatory value that the option does not set
MISSING_VALUE = "???"


class UnavailableError(ImportError):
    """A registered plugin whose optional dependency is missing here; the message says what to install."""


#: called (once each) when a name is not registered after the package's own modules were discovered, and
#: before a complete listing: :mod:`xmlthresh.config.plugins` installs its loader here, so that a run imports the
#: plugins only when it asks for a name that is not built in
_PLUGIN_LOADERS: list[Callable[[], object]] = []
_LOADED_HOOKS: set[int] = set()


def on_unknown_name(loader: Callable[[], object]) -> None:
    """Install ``loader`` (idempotent): it runs the first time any registry misses a name or lists all."""
    if loader not in _PLUGIN_LOADERS:
        _PLUGIN_LOADERS.append(loader)


def _run_plugin_loaders() -> None:
    for loader in list(_PLUGIN_LOADERS):
        if id(loader) not in _LOADED_HOOKS:
            _LOADED_HOOKS.add(id(loader))
            loader()


class Registry(Generic[T]):
    """A named collection of plugins of one kind (``kind`` is used in error messages), discovered from the
    modules of ``package`` (see module docstring). ``modules`` names the module of a plugin whose name is not
    its module's (``ranked_lists`` in ``ranked_list_loader``), so that looking it up imports that one module
    instead of every module of the package."""

    def __init__(self, kind: str, package: str | None = None, modules: Mapping[str, str] | None = None) -> None:
        self.kind = kind
        self.package = package
        self.modules = dict(modules or {})
        self._entries: dict[str, T] = {}
        self._discovered = package is None

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: register the decorated object under ``name`` (names are unique)."""

        def decorate(obj: T) -> T:
            existing = self._entries.get(name)
            if existing is not None and existing is not obj:
                raise ValueError(f"{self.kind} {name!r} is registered twice: {existing!r} and {obj!r}")
            self._entries[name] = obj
            if isinstance(obj, type):
                obj.registry_name = name  # type: ignore[attr-defined]
            return obj

        return decorate

    def get(self, name: str) -> T:
        """The object registered as ``name`` (a plugin's name loads the plugins).

        Parameters
        ----------
        name : str
            The registered name (``"domain"``, ``"pooled"``, ...).

        Returns
        -------
        object
            The registered object: for ``STRATEGIES`` a strategy class, a scikit-learn estimator on score
            matrices.

        Raises
        ------
        UnknownNameError
            No such name; the message lists the known ones.

        Examples
        --------
        >>> from xmlthresh.strategies import STRATEGIES
        >>> STRATEGIES.get("domain").__name__
        'DomainStrategy'
        >>> STRATEGIES.get("nosuch")
        Traceback (most recent call last):
        ...
        xmlthresh._util.registry.UnknownNameError: unknown strategy 'nosuch'; known: ...
        """
        if not isinstance(name, str):  # None, a number, a list: not a name (and not importable)
            raise UnknownNameError(f"a {self.kind} is named by a text ({', '.join(self.names()) or '(none)'}), got "
                                   f"{name!r} ({type(name).__name__})")
        if name not in self._entries:
            self._import_module_named(name)
        if name not in self._entries:
            self.discover()
        if name not in self._entries:
            _run_plugin_loaders()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "(none)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}{_option_hint(self.kind, name)}; known: "
                                   f"{known}") from None

    def build(self, name: str, params: Mapping[str, Any] | None = None, *, check_available: bool = True) -> Any:
        """The registered class ``name`` instantiated with ``params`` -- the one config-to-object path.

        Every value is checked and converted by its declared type
        (:func:`~xmlthresh._util.typed_params.typed_params`: ``no`` is false, ``1e6`` an integer), and the
        object's own ``_check_params()`` (value checks), when it has one, runs before it is returned, so a bad
        value fails here and not deep inside a fit.

        Parameters
        ----------
        name : str
            The registered name.
        params : mapping, optional
            The constructor's parameters, as an option file or the command line gives them.
        check_available : bool, default True
            Whether a plugin whose optional dependency is missing is refused.

        Returns
        -------
        object
            The instance.

        Raises
        ------
        ConfigError
            An unknown or missing parameter (the message names the accepted ones), or a value of the wrong
            type or out of range.
        UnavailableError
            The plugin's optional dependency is missing (with ``check_available``).
        UnknownNameError
            No such name.

        Examples
        --------
        >>> from xmlthresh.strategies import STRATEGIES
        >>> STRATEGIES.build("domain", {"beta": 2, "refine": "bnb"}).get_params()["refine"]
        'bnb'
        >>> STRATEGIES.build("domain", {"bta": 2})
        Traceback (most recent call last):
        ...
        xmlthresh._util.registry.ConfigError: strategy 'domain' has no parameter(s) bta; its parameters: ...
        """
        cls = self.get(name)
        if params is not None and not isinstance(params, Mapping):
            raise ConfigError(f"the parameters of {self.kind} {name!r} are a mapping of names to values (a dict), "
                              f"got {type(params).__name__} {params!r:.60}")
        params = dict(params or {})
        what = f"{self.kind} {name!r}"
        reason = _unavailable_reason(cls) if check_available else ""
        if reason:
            raise UnavailableError(f"{what} is unavailable: {reason}")
        accepted, required = constructor_parameters(cls)
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise ConfigError(f"{what} has no parameter(s) {', '.join(unknown)}; "
                              f"its parameters: {', '.join(sorted(accepted)) or '(none)'}")
        missing = [key for key in required if key not in params]
        if missing:
            raise ConfigError(f"{what} needs the parameter(s) {', '.join(missing)}")
        try:
            params = typed_params(self.kind, cls, params)
        except ParameterTypeError as refused:  # the grid check or the class's own may say more (the range)
            own = _own_refusal(self.kind, cls, params)
            raise own if own is not None and refused.key in str(own) else refused from None
        check_sequence_params(self.kind, cls, params)
        unset = [key for key, value in params.items() if isinstance(value, str) and value == MISSING_VALUE]
        obj = cls(**params)  # a class that refuses the unset value says so in its own words
        check = getattr(obj, "_check_params", None)
        if callable(check):
            check()
        if unset:  # OmegaConf's mark of a value the option leaves to the user, taken as text by the class
            raise ConfigError(f"{what} needs a value for {', '.join(f'{self.kind}.{key}' for key in unset)} (the "
                              f"option leaves it to you: {self.kind}.{unset[0]}=...)")
        return obj

    def discover(self) -> None:
        """Import every public module of the package once, so that every built-in plugin is registered."""
        if self._discovered:
            return
        self._discovered = True
        package = importlib.import_module(self.package)  # type: ignore[arg-type]
        for module in pkgutil.iter_modules(package.__path__):
            if not module.name.startswith("_") and module.name not in NOT_PLUGIN_MODULES:
                importlib.import_module(f"{self.package}.{module.name}")

    def names(self) -> list[str]:
        """Every registered name: the package's modules discovered and the plugins loaded.

        Returns
        -------
        list of str
            The names, sorted.

        Examples
        --------
        >>> from xmlthresh.strategies import STRATEGIES
        >>> {"domain", "pooled", "independent", "coordinate"} <= set(STRATEGIES.names())
        True
        """
        self.discover()
        _run_plugin_loaders()
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str) and name not in self._entries:
            self._import_module_named(name)
            if name not in self._entries:
                self.discover()
            if name not in self._entries:
                _run_plugin_loaders()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def _import_module_named(self, name: str) -> None:
        """Import ``<package>.<name>`` (the module that, by convention, registers ``name``; ``modules`` for the
        exceptions) when it exists."""
        name = self.modules.get(name, name)
        if self.package is None or not name.isidentifier() or name.startswith("_") or name in NOT_PLUGIN_MODULES:
            return
        module = f"{self.package}.{name}"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)


#: how the library reaches what an option of the command line builds, per group
_OPTION_IN_PYTHON = {"dataset": "xmlthresh.load_dataset({name!r})",
                     "strategy": "xmlthresh.fit_thresholds(scores, labels, ...) with its strategy and parameters"}


def _option_hint(kind: str, name: str) -> str:
    """", an option of the command line ..." when ``name`` is a packaged option of the group ``kind`` (a data
    set such as ``espgame`` is an option that builds the ``mulan`` loader, not a registered class); "" else."""
    import xmlthresh

    if not (Path(xmlthresh.__file__).parent / "conf" / kind / f"{name}.yaml").is_file():
        return ""
    python = _OPTION_IN_PYTHON.get(kind, "").format(name=name)
    return (f": it is an option of the command line ({kind}={name}), which builds one of the registered {kind} "
            f"classes below" + (f"; in Python: {python}" if python else ""))


def _own_refusal(kind: str, cls: type, params: Mapping[str, Any]) -> Exception | None:
    """The error the grid check or the class's own checks (constructor, ``_check_params``) give for ``params``
    as given, when they refuse them with a message (``must be an integer >= 1``, ``a list of integers (like the
    default ...)``: more than the type alone says); None otherwise."""
    try:
        check_sequence_params(kind, cls, params)
        obj = cls(**params)
        check = getattr(obj, "_check_params", None)
        if callable(check):
            check()
    except (InputError, ValueError) as exc:
        return exc
    except Exception:  # noqa: BLE001 - a check that fails otherwise on a value of the wrong type says nothing
        return None
    return None


def constructor_parameters(cls: type) -> tuple[list[str], list[str]]:
    """(every keyword parameter of ``cls.__init__``, the required ones among them), ``self`` excluded."""
    signature = inspect.signature(cls.__init__)
    accepted, required = [], []
    for key, parameter in signature.parameters.items():
        if key == "self" or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        accepted.append(key)
        if parameter.default is parameter.empty:
            required.append(key)
    return accepted, required


def check_sequence_params(kind: str, cls: type, params: Mapping[str, Any]) -> None:
    """A parameter whose default is a list or tuple of numbers (a grid: ``k_grid``, ``bandwidth_grid``) must be
    given as a list (or array) of numbers of the same kind -- integers where the default holds integers -- or
    a single number (which the plugin may broadcast); text or a mapping is a :class:`ConfigError` naming
    ``<kind>.<parameter>``. (``estimator.k_grid=abc`` was iterated letter by letter
    and failed in ``int('a')`` without naming the parameter.) Other parameters are the plugin's
    ``_check_params``' business."""
    for key, default in constructor_defaults(cls).items():
        if key not in params or not isinstance(default, (list, tuple)) or not default \
                or not all(_is_number(item) for item in default):
            continue
        integers = all(isinstance(item, numbers.Integral) for item in default)
        value = params[key]
        expected = f"a list of {'integers' if integers else 'numbers'} (like the default {list(default)})"
        if _is_number(value):
            continue  # a single number: the plugin's business (surd broadcasts alpha=0.3 to both coordinates)
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):  # lists, tuples, arrays
            raise ConfigError(f"{kind}.{key} must be {expected}, got {value!r} ({type(value).__name__})")
        bad = [item for item in value if not (_is_number(item) and (isinstance(item, numbers.Integral) or not integers))]
        if bad:
            raise ConfigError(f"{kind}.{key} must be {expected}, got {list(value)!r} ({bad[0]!r} is not "
                              f"{'an integer' if integers else 'a number'})")


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def constructor_defaults(cls: type) -> dict[str, Any]:
    """The default value of every parameter of ``cls.__init__`` that has one."""
    return {key: parameter.default for key, parameter in inspect.signature(cls.__init__).parameters.items()
            if key != "self" and parameter.default is not parameter.empty}


def _unavailable_reason(cls: Any) -> str:
    unavailable = getattr(cls, "unavailable_reason", None)
    return (unavailable() or "") if callable(unavailable) else ""

