"""Work run ahead on worker threads (model.engine.ahead): results in input order, a bounded number of items
taken ahead, an exception in a worker raised in the caller at its item's turn (never a hang), and the items not
yet started cancelled when the caller stops."""

from __future__ import annotations

import threading
import time

import pytest
from attention_lens.model.engine.ahead import ahead


def slow_square(k: int) -> tuple[int, str]:
    time.sleep(0.002 * (k % 4))  # later items often finish before earlier ones
    return k * k, threading.current_thread().name


@pytest.mark.parametrize("workers", [0, 1, 3])
def test_results_come_back_in_input_order(workers):
    got = list(ahead(slow_square, range(40), workers))
    assert [r for r, _ in got] == [k * k for k in range(40)]
    names = {name for _, name in got}
    if workers:
        assert all(name.startswith("ahead") for name in names) and len(names) <= workers
    else:
        assert names == {threading.current_thread().name}


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_at_most_workers_plus_one_items_are_taken_ahead(workers):
    taken = []

    def items():
        for k in range(30):
            taken.append(k)
            yield k

    for k, _ in enumerate(ahead(slow_square, items(), workers)):
        assert len(taken) <= k + workers + 1
    assert taken == list(range(30))


def test_without_workers_nothing_is_computed_before_it_is_asked_for():
    done = []
    out = ahead(lambda k: done.append(k) or k, range(5), 0)
    assert done == []
    assert next(out) == 0 and done == [0]


def failing_at(bad: int, calls: list[int]):
    def work(k: int) -> int:
        calls.append(k)
        if k == bad:
            raise ValueError(f"item {k} is bad")
        time.sleep(0.001)
        return k

    return work


@pytest.mark.parametrize("workers", [0, 2])
def test_an_exception_in_a_worker_is_raised_in_the_caller_at_its_turn(workers):
    calls: list[int] = []
    got = []
    with pytest.raises(ValueError, match="item 5 is bad"):
        for k in ahead(failing_at(5, calls), range(100), workers):
            got.append(k)
    assert got == [0, 1, 2, 3, 4]
    assert max(calls) <= 5 + workers + 1  # the items after it were not started (or cancelled)


def test_stopping_early_returns_at_once_and_leaves_no_worker_running():
    before = {t.name for t in threading.enumerate()}
    out = ahead(slow_square, range(1000), 2)
    assert [next(out)[0] for _ in range(3)] == [0, 1, 4]
    out.close()
    left = [t for t in threading.enumerate() if t.name.startswith("ahead") and t.name not in before]
    assert not left


def test_a_failing_item_reader_is_raised_too():
    def items():
        yield 1
        yield 2
        raise ValueError("line 3: no tab")

    with pytest.raises(ValueError, match="line 3"):
        list(ahead(slow_square, items(), 2))
