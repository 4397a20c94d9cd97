"""IdPositions answers as a dict from id to position would, through appends, drops, re-adds and hash collisions."""

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_daemon.retrieval.id_positions import IdPositions


class CollidingPositions(IdPositions):
    """Ids hashed to one of four values, so lookups meet other ids with the same hash."""

    _key = staticmethod(lambda memory_id: len(memory_id) % 4)


operations = st.lists(st.tuples(st.sampled_from(["append", "pop"]), st.integers(0, 40)), max_size=120)


def _check(kind, initial: list[int], steps, merge_from: int) -> None:
    ids = [f"m{n}" for n in dict.fromkeys(initial)]
    model = {m: i for i, m in enumerate(ids)}
    positions = kind(list(ids), merge_from)
    for action, n in steps:
        memory_id = f"m{n}"
        if action == "append" and memory_id not in model:
            model[memory_id] = positions.append(memory_id)
        elif action == "pop":
            assert positions.pop(memory_id) == model.pop(memory_id, None)
        everything = [f"m{k}" for k in range(41)]
        assert [positions.get(m) for m in everything] == [model.get(m) for m in everything]
        assert positions.positions_of(everything) == [model.get(m) for m in everything]
        assert len(positions) == len(model)
        assert all(positions.ids[p] == m for m, p in model.items())


@settings(max_examples=60, deadline=None)
@given(initial=st.lists(st.integers(0, 40), max_size=30), steps=operations, merge_from=st.sampled_from([1, 3, 10_000]))
def test_lookups_match_a_dict(initial, steps, merge_from):
    _check(IdPositions, initial, steps, merge_from)


@settings(max_examples=60, deadline=None)
@given(initial=st.lists(st.integers(0, 40), max_size=30), steps=operations, merge_from=st.sampled_from([1, 3, 10_000]))
def test_lookups_match_a_dict_when_hashes_collide(initial, steps, merge_from):
    _check(CollidingPositions, initial, steps, merge_from)


def test_a_dropped_id_is_blanked_and_can_come_back_at_the_end():
    positions = IdPositions(["a", "b", "c"])
    assert positions.pop("b") == 1 and positions.ids == ["a", "", "c"]
    assert positions.get("b") is None and "b" not in positions
    assert positions.append("b") == 3 and positions.get("b") == 3
    assert positions.positions_of(["c", "b", "x"]) == [2, 3, None]
