"""The queue of DML messages held until their table schema is announced.

Every operation costs O(log n) per message it touches, whatever the number held: rows are found
by their schema key (``take``), the oldest by a heap of arrival numbers (``pop_oldest``).  A
decode that fails must leave the queue as it found it; rather than copying the queue on every
call, the changes of a call are recorded in an undo log (``begin``/``commit``/``rollback``) and
replayed backwards on failure.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass


@dataclass
class Held:
    value: bytes
    key: tuple
    op: str
    commit_ts: int
    partition: int | None
    offset: int | None
    batch: int = -1      # which decode() call it came from, and its index there
    index: int | None = None
    claim_check: str | None = None


class HoldQueue:
    def __init__(self):
        self._entries: dict[int, Held] = {}             # arrival number -> held message
        self._by_key: dict[tuple, deque[int]] = {}      # schema key -> its arrival numbers, ascending
        self._heap: list[int] = []   # arrival numbers; may also hold numbers no longer held (skipped)
        self._next = 0
        self.bytes = 0
        self._undo: list | None = None

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        """Held messages in arrival order."""
        entries = self._entries
        return (entries[n] for n in sorted(entries))

    def get(self, number: int) -> Held | None:
        return self._entries.get(number)

    # ------------------------------------------------------------------ changes
    def append(self, h: Held) -> int:
        number = self._next
        self._next += 1
        self._put(number, h)
        self._by_key.setdefault(h.key, deque()).append(number)
        heapq.heappush(self._heap, number)
        self._log(("append", number))
        return number

    def oldest(self) -> Held:
        return self._entries[self._oldest_number()]

    def pop_oldest(self) -> Held:
        number = self._oldest_number()
        heapq.heappop(self._heap)
        h = self._drop(number)
        numbers = self._by_key[h.key]
        numbers.popleft()           # the oldest message is also the oldest of its key
        if not numbers:
            del self._by_key[h.key]
        self._log(("pop_oldest", number, h))
        return h

    def take(self, key) -> list[Held]:
        """Remove and return, in arrival order, every message held for ``key``."""
        numbers = self._by_key.pop(key, None)
        if numbers is None:
            return []
        taken = [self._drop(n) for n in numbers]
        self._log(("take", key, numbers, taken))
        self._compact()
        return taken

    def remove(self, h: Held) -> bool:
        """Remove one held message (found by identity); False if it is not held."""
        numbers = self._by_key.get(h.key)
        for number in numbers or ():
            if self._entries[number] is h:
                numbers.remove(number)
                if not numbers:
                    del self._by_key[h.key]
                self._drop(number)
                self._log(("remove", number, h))
                return True
        return False

    # ------------------------------------------------------------------ undo log
    def begin(self) -> None:
        self._undo = []

    def commit(self) -> None:
        self._undo = None

    def savepoint(self) -> int:
        return len(self._undo) if self._undo is not None else 0

    def rollback(self, savepoint: int | None = None) -> None:
        """Undo the changes since ``savepoint``, keeping the log open (a later ``commit`` or
        ``rollback`` covers what came before it); without one, all since ``begin``, ending it."""
        undo = self._undo or []
        if savepoint is None:
            self._undo = None
        else:
            undo, self._undo = undo[savepoint:], undo[:savepoint]
        for step in reversed(undo):
            if step[0] == "append":
                number = step[1]
                h = self._drop(number)
                numbers = self._by_key[h.key]
                numbers.pop()       # appended last, so it is the newest of its key
                if not numbers:
                    del self._by_key[h.key]
            elif step[0] == "remove":
                _, number, h = step
                self._put(number, h)
                numbers = self._by_key.setdefault(h.key, deque())
                numbers.append(number)
                if list(numbers) != sorted(numbers):
                    self._by_key[h.key] = deque(sorted(numbers))
                heapq.heappush(self._heap, number)
            elif step[0] == "pop_oldest":
                _, number, h = step
                self._put(number, h)
                self._by_key.setdefault(h.key, deque()).appendleft(number)
                heapq.heappush(self._heap, number)
            else:
                _, key, numbers, taken = step
                for n, h in zip(numbers, taken):
                    self._put(n, h)
                    heapq.heappush(self._heap, n)
                self._by_key[key] = numbers
        self._compact()

    # ------------------------------------------------------------------ internals
    def _log(self, step) -> None:
        if self._undo is not None:
            self._undo.append(step)

    def _put(self, number: int, h: Held) -> None:
        self._entries[number] = h
        self.bytes += len(h.value)

    def _drop(self, number: int) -> Held:
        h = self._entries.pop(number)
        self.bytes -= len(h.value)
        return h

    def _oldest_number(self) -> int:
        heap, entries = self._heap, self._entries
        while heap[0] not in entries:
            heapq.heappop(heap)
        return heap[0]

    def _compact(self) -> None:
        # numbers of released messages stay in the heap until they reach its top; rebuild it when
        # they outnumber the held ones, so its size stays proportional to the queue (amortised O(1))
        if len(self._heap) > 2 * len(self._entries) + 1024:
            self._heap = sorted(self._entries)
