"""Flags.set wakes the waiter of its flag as SimPy's Event.succeed would (it does that inline)."""
from __future__ import annotations

import simpy

from pyptoemu.core.pipe import Flags


class _Observer:
    def __init__(self) -> None:
        self.double = []

    def double_set(self, flag, first, second) -> None:
        self.double.append((flag, first, second))


def _woken(inline: bool) -> tuple:
    """(the event's state just after the set, the cycle and the order its waiters ran in)."""
    env = simpy.Environment()
    flags = Flags(env, _Observer())
    ran = []
    other = env.timeout(5)  # scheduled before the set: runs first at cycle 5
    other.callbacks.append(lambda _: ran.append(("timeout", env.now)))

    def setter():
        yield env.timeout(5)
        ev = flags.wait_event(("V", "MTE3", 0))
        ev.callbacks.append(lambda e: ran.append(("flag", env.now, e.value)))
        if inline:
            flags.set(("V", "MTE3", 0), "setter")
        else:  # what it stands for: the setter noted, the waiter succeeded
            flags.state[("V", "MTE3", 0)] = "setter"
            flags.waiters.pop(("V", "MTE3", 0)).succeed()
        ran.append(("after set", ev.triggered, ev.ok, ev.value, ev.processed))

    env.process(setter())
    env.run()
    return tuple(ran), dict(flags.state)


def test_a_set_wakes_its_waiter_as_succeed_does() -> None:
    assert _woken(inline=True) == _woken(inline=False)
    ran, state = _woken(inline=True)
    assert ("flag", 5, None) in ran and state == {("V", "MTE3", 0): "setter"}


def test_a_set_without_a_waiter_only_notes_the_setter() -> None:
    env = simpy.Environment()
    observer = _Observer()
    flags = Flags(env, observer)
    flags.set(("MTE2", "V", 1), "a")
    flags.set(("MTE2", "V", 1), "b")
    assert observer.double == [(("MTE2", "V", 1), "a", "b")] and not env._queue
    assert flags.try_consume(("MTE2", "V", 1)) == "b"
