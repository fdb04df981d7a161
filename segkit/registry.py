"""A registry of named things that a layer above fills and the layers below look up by name.

The core declares what it needs (``segkit.workloads``); a workload package registers what it has on import
(``fusions`` its specs, and ``fusions.formulations`` its multi-fusion formulations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from segkit.errors import UnknownNameError

T = TypeVar("T")


@dataclass
class Registry(Generic[T]):
    """Things of one ``kind`` by name (``kind`` names them in errors; ``empty`` says what to do with none)."""

    kind: str
    empty: str = "none registered"
    _items: dict[str, T] = field(default_factory=dict)

    def register(self, name: str, item: T) -> T:
        """Make ``item`` known as ``name``; another item under a taken name is an error."""
        held = self._items.get(name)
        if held is not None and held is not item:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(f"no {self.kind} {name!r}; known: {', '.join(self._items) or self.empty}") \
                from None

    def names(self) -> list[str]:
        return list(self._items)
