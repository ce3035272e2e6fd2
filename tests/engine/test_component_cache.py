"""ComponentCache: one value per component set, by identity, for a few sets at a time."""

from __future__ import annotations

import dataclasses

from kutnahora.engine import components_hash
from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.component_file import default_components
from kutnahora.engine.components import ComponentSet


def test_a_value_is_built_once_per_set_and_sets_are_told_apart_by_identity() -> None:
    built: list[ComponentSet] = []

    def build(components: ComponentSet) -> int:
        built.append(components)
        return len(built)

    cache = ComponentCache(build)
    packaged = default_components()
    twin = dataclasses.replace(packaged)  # equal values, another object
    assert twin == packaged and twin is not packaged
    assert cache.get(packaged) == 1
    assert cache.get(packaged) == 1
    assert cache.get(twin) == 2
    assert cache.get(packaged) == 1
    assert built == [packaged, twin] and built[1] is twin
    assert len(cache) == 2


def test_the_cache_holds_at_most_its_limit_of_sets() -> None:
    cache = ComponentCache(lambda components: id(components), limit=3)
    sets = [dataclasses.replace(default_components()) for _ in range(5)]
    for components in sets:
        assert cache.get(components) == id(components)
        assert len(cache) <= 3
    assert cache.get(sets[-1]) == id(sets[-1])
    cache.clear()
    assert len(cache) == 0


def test_the_content_hash_is_the_same_for_equal_sets_held_apart() -> None:
    packaged = default_components()
    assert components_hash(dataclasses.replace(packaged)) == components_hash(packaged)
    renamed = dataclasses.replace(packaged, name="another name")
    assert components_hash(renamed) == components_hash(packaged)
