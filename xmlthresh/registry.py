"""Name -> class registries for the pluggable concepts (strategies, datasets, ...).

A plugin registers itself with a decorator; the CLI and users look it up by the same name that names its
YAML option (``xmlthresh/conf/strategy/domain.yaml`` <-> ``@STRATEGIES.register("domain")``).
"""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

T = TypeVar("T")


class UnknownNameError(KeyError):
    """Raised when a registry is asked for a name it does not hold; the message lists the known names."""

    def __str__(self) -> str:  # KeyError quotes its argument; we want the plain sentence.
        return str(self.args[0])


class Registry(Generic[T]):
    """A named collection of plugins of one kind (``kind`` is used in error messages)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

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
        """The object registered as ``name``; an unknown name raises an error listing the known ones."""
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(sorted(self._entries)) or "(none)"
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries)
