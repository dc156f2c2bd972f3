"""The transposition table's entries and its replacement scheme (:mod:`pedina.tt`): what is
stored comes back, a deep entry is kept against shallower ones of other positions, an
earlier search's entry gives way, and a key of another position never reads an entry."""

from __future__ import annotations

from pedina.tt import (
    BUCKET_WORDS, CHECK_SHIFT, DEPTH_MASK, EXACT, KEY_MASK, LOWER, UPPER, TranspositionTable, stored_bound,
    stored_depth, stored_ends, stored_forced, stored_score,
)

#: A key, and keys of other positions in the same bucket: they differ only in the check's bits.
KEY = 0x2F3A_5C7E_1B2D_4E6F & KEY_MASK
SAME_BUCKET = [KEY ^ (n << CHECK_SHIFT) for n in range(1, 4)]


def bucket_of(table: TranspositionTable, key: int) -> int:
    """The index in ``table.words`` of ``key``'s bucket: its first entry's key word."""
    return (key & table.mask) * BUCKET_WORDS


def depth_of(table: TranspositionTable, key: int) -> int | None:
    """The depth stored for ``key``, or ``None`` when the table has no entry for it."""
    data, _ = table.probe(key)
    return stored_depth(data) if data else None


def test_an_entry_gives_back_what_was_stored() -> None:
    table = TranspositionTable(1)
    frm, to, taken = 1 << 13, 1 << 22, 1 << 17 | 1 << 18
    table.store(KEY, 9, LOWER, -10_250, (frm, to, taken, 0, (1 << 4,)), True)
    data, stored_taken = table.probe(KEY)
    assert (stored_depth(data), stored_bound(data), stored_score(data)) == (9, LOWER, -10_250)
    assert (stored_ends(data), stored_taken, stored_forced(data)) == (frm | to, taken, True)

    table.store(KEY, 3, UPPER, 10_250, None, False)  # the same position, searched again
    data, stored_taken = table.probe(KEY)
    assert (stored_depth(data), stored_bound(data), stored_score(data)) == (3, UPPER, 10_250)
    assert (stored_ends(data), stored_taken, stored_forced(data)) == (0, 0, False)


def test_a_key_of_another_position_reads_no_entry() -> None:
    table = TranspositionTable(1)
    assert table.probe(KEY) == (0, 0)
    table.store(KEY, 5, EXACT, 0, None, False)
    assert all(table.probe(other) == (0, 0) for other in SAME_BUCKET)
    assert table.probe(KEY ^ 1) == (0, 0)  # another bucket


def test_a_deep_entry_is_kept_and_the_second_slot_always_replaced() -> None:
    table = TranspositionTable(1)
    table.store(KEY, 12, EXACT, 0, None, False)
    second, third, fourth = SAME_BUCKET
    table.store(second, 4, EXACT, 0, None, False)
    assert (depth_of(table, KEY), depth_of(table, second)) == (12, 4)
    table.store(third, 3, EXACT, 0, None, False)  # shallower again: the second slot, replaced
    assert (depth_of(table, KEY), depth_of(table, second), depth_of(table, third)) == (12, None, 3)
    table.store(fourth, 12, EXACT, 0, None, False)  # as deep as the first: it takes the first slot
    assert (depth_of(table, fourth), depth_of(table, KEY), depth_of(table, third)) == (12, None, 3)


def test_the_deep_entry_of_an_earlier_search_gives_way() -> None:
    table = TranspositionTable(1)
    second, third, _ = SAME_BUCKET
    table.store(KEY, 12, EXACT, 0, None, False)
    table.new_search()
    table.store(second, 2, EXACT, 0, None, False)
    assert (depth_of(table, second), depth_of(table, KEY)) == (2, None)
    table.store(third, 1, EXACT, 0, None, False)  # the new first entry is this search's: kept
    assert (depth_of(table, second), depth_of(table, third)) == (2, 1)


def test_a_shallower_result_of_the_same_position_replaces_its_entry() -> None:
    table = TranspositionTable(1)
    table.store(KEY, 12, LOWER, 50, None, False)
    table.store(KEY, 6, EXACT, 30, None, False)
    data, _ = table.probe(KEY)
    assert (stored_depth(data), stored_bound(data), stored_score(data)) == (6, EXACT, 30)
    base = bucket_of(table, KEY)
    assert table.words[base + 2] == table.words[base + 3] == 0  # no second copy


def test_a_depth_beyond_the_field_is_kept_as_its_largest() -> None:
    table = TranspositionTable(1)
    table.store(KEY, DEPTH_MASK + 40, EXACT, 0, None, False)
    assert depth_of(table, KEY) == DEPTH_MASK
    table.store(SAME_BUCKET[0], DEPTH_MASK + 90, EXACT, 0, None, False)  # as deep, kept in the field
    assert (depth_of(table, KEY), depth_of(table, SAME_BUCKET[0])) == (None, DEPTH_MASK)


def test_a_half_written_entry_of_another_depth_is_never_read() -> None:
    """Another process may have written one word of an entry and not yet the other: the key
    word is stored xored with the data word, so words of two entries whose data words differ
    in the check's bits (here, in depth) do not check, whichever word came first."""
    table = TranspositionTable(1)
    other = SAME_BUCKET[0]
    base = bucket_of(table, KEY)
    table.store(KEY, 7, EXACT, 11, None, False)
    old_words = table.words[base], table.words[base + 1]
    table.store(other, 9, EXACT, 11, None, False)  # as deep or deeper: the same slot
    new_words = table.words[base], table.words[base + 1]
    assert table.probe(other) != (0, 0)
    for key_word, data_word in ((new_words[0], old_words[1]), (old_words[0], new_words[1])):
        table.words[base], table.words[base + 1] = key_word, data_word
        assert table.probe(KEY) == table.probe(other) == (0, 0)
