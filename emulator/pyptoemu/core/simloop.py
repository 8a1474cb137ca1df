"""SimPy's event loop, specialised for the emulator: the same events in the same order, fewer
interpreter steps per event.

A timing-only run of the stream kernel (examples/double_buffer_1024.pto) processes about 2600
SimPy events, each one ``Environment.step`` call and (nearly always) one ``Process._resume``
call: both general (a failed event, an interrupt, a process that ends) where nearly every event
of a run is none of these. :class:`Environment` runs its loop in one frame (``step`` inlined) and
:class:`Process` resumes with the fast case first. Both stay SimPy: what they do is what
``simpy.Environment.run`` and ``simpy.Process._resume`` (4.1) do, in the same order, and anything
else still goes through them (tests/emulator/core/test_simloop.py runs random process networks on
both). Measured with callgrind on that kernel: about -3 M machine instructions per run of 125 M,
two thirds of it the process (a bound method made and dropped per wait, and the general loop).
"""

from __future__ import annotations

from heapq import heappop
from typing import Any

import simpy
from simpy.core import BoundClass, StopSimulation
from simpy.events import URGENT, Event, EventPriority, _describe_frame


class Process(simpy.Process):
    """A SimPy process whose resumption takes the common case first: the event it waited for
    succeeded and the generator yields a new event not processed yet. That case does what
    ``simpy.Process._resume`` does (the same calls, in the same order), on a callback made once
    rather than a bound method made per wait; anything else (a failed event, an event processed
    already, the generator ending) goes on as ``simpy.Process._resume`` goes."""

    def __init__(self, env: simpy.Environment, generator: Any) -> None:
        super().__init__(env, generator)
        self._resume_callback = self._resume  # (equal to self._resume, as Interruption compares it)

    def _resume(self, event: Event) -> None:
        if not event._ok:
            return super()._resume(event)
        env = self.env
        env._active_proc = self
        try:
            event = self._generator.send(event._value)
        except StopIteration as e:  # the process ended: as simpy.Process._resume
            self._ok = True
            self._value = e.args[0] if len(e.args) else None
            env.schedule(self)
            self._target = None
            env._active_proc = None
            return None
        except BaseException as e:  # noqa: BLE001 - the process failed: as simpy.Process._resume
            self._ok = False
            e.__traceback__ = e.__traceback__.tb_next
            self._value = e
            env.schedule(self)
            self._target = None
            env._active_proc = None
            return None
        try:
            callbacks = event.callbacks
            if callbacks is not None:  # not processed yet: wait for it
                callbacks.append(self._resume_callback)
                self._target = event
                env._active_proc = None
                return None
        except AttributeError:  # not an event: as simpy.Process._resume
            if hasattr(event, "callbacks"):
                raise
            descr = _describe_frame(self._generator.gi_frame)
            raise RuntimeError(f'\n{descr}Invalid yield value "{event}"') from None
        return super()._resume(event)  # processed already: SimPy's loop sends its value on


    def close(self) -> None:
        """End a process that waits for ever (a pipe waiting for its next instruction when the run
        is over): its generator is closed, so its frame lets go of what it holds (the pipe, its
        core), and it no longer refers to itself (``_resume_callback``): freed by reference
        counting, not left in cycles for the garbage collector."""
        self._generator.close()
        self._resume_callback = None


class Environment(simpy.Environment):
    """A SimPy environment whose :meth:`run` processes events without a ``step`` call each, and
    whose processes are :class:`Process`."""

    process = BoundClass(Process)

    def run(self, until: Any = None) -> Any:
        """``simpy.Environment.run``, with ``step`` inlined (its exact steps, in its order)."""
        if until is not None:
            if not isinstance(until, Event):
                at = until if isinstance(until, int) else float(until)
                if at <= self._now:
                    raise ValueError(f"until ({at}) must be greater than the current simulation time")
                until = Event(self)
                until._ok = True
                until._value = None
                self.schedule(until, URGENT, at - self._now)
            elif until.callbacks is None:
                return until.value
            until.callbacks.append(StopSimulation.callback)
        queue = self._queue
        try:
            while queue:
                self._now, _, _, event = heappop(queue)
                callbacks, event.callbacks = event.callbacks, None
                try:
                    for callback in callbacks:
                        callback(event)
                except StopSimulation:  # as step: the callbacks after it run when the loop resumes
                    event.callbacks = callbacks[callbacks.index(callback) + 1:]
                    self.schedule(event, EventPriority(-1))
                    raise
                if not event._ok and not hasattr(event, "_defused"):
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    raise exc
        except StopSimulation as exc:
            return exc.args[0]
        if until is not None:
            assert not until.triggered
            raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}')
        return None
