"""The specialised SimPy loop (pyptoemu.core.simloop) runs every model exactly as SimPy does.

Random process networks (timeouts, shared events that succeed or fail, events yielded after they
were processed, processes that wait for, interrupt or outlive each other, processes that fail) run
on ``simpy.Environment`` and on ``simloop.Environment``: the log of what each process saw when, the
run's result and the error it raised must be the same (and again when a run that stopped goes on).
"""

from __future__ import annotations

import re

import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from pyptoemu.core import simloop

N_EVENTS = 3
N_PROCS = 4

ACTION = st.one_of(
    st.tuples(st.just("timeout"), st.integers(0, 3)),
    st.tuples(st.just("wait"), st.integers(0, N_EVENTS - 1)),
    st.tuples(st.just("succeed"), st.integers(0, N_EVENTS - 1)),
    st.tuples(st.just("fail"), st.integers(0, N_EVENTS - 1)),
    st.tuples(st.just("again"), st.just(0)),  # yield the last event again (processed by now, or not)
    st.tuples(st.just("join"), st.integers(0, N_PROCS - 1)),
    st.tuples(st.just("interrupt"), st.integers(0, N_PROCS - 1)),
    st.tuples(st.just("raise"), st.just(0)),
    st.tuples(st.just("return"), st.integers(0, 9)),
    st.tuples(st.just("not_an_event"), st.just(0)),
)
PROGRAMS = st.lists(st.lists(ACTION, max_size=8), min_size=1, max_size=N_PROCS)
UNTIL = st.one_of(st.none(), st.integers(1, 12), st.just("proc0"))


class Boom(Exception):
    pass


class Model:
    """A network of processes, each running its program of actions; ``log`` is what they saw."""

    def __init__(self, env: simpy.Environment, programs: list) -> None:
        self.env = env
        self.log: list = []
        self.events = [env.event() for _ in range(N_EVENTS)]
        self.procs: list = []
        for pid, program in enumerate(programs):
            self.procs.append(env.process(self.body(pid, program)))

    def body(self, pid: int, program: list):
        env, log = self.env, self.log
        last = env.timeout(0)
        for what, arg in program:
            try:
                if what == "return":
                    return (pid, arg)
                if what == "raise":
                    raise Boom(pid, "raised")
                event = self.act(pid, what, arg, last)
                if event is not None:
                    last = event
                    log.append((env.now, pid, what, (yield event)))
            except simpy.Interrupt as e:
                log.append((env.now, pid, "interrupted", e.cause))
            except Boom as e:
                if e.args[1] == "raised":
                    raise
                log.append((env.now, pid, "failed", e.args))
        return (pid, "end")

    def act(self, pid: int, what: str, arg: int, last):
        """Do ``what``; the event to wait for next, if any."""
        env, events, procs = self.env, self.events, self.procs
        other = procs[arg] if what in ("join", "interrupt") and arg < len(procs) else None
        if other is env.active_process:
            other = None
        if what == "timeout":
            return env.timeout(arg, value=(pid, arg))
        if what == "wait":
            return events[arg]
        if what == "again":
            return last
        if what == "join":
            return other
        if what == "not_an_event":
            return 42
        if what == "succeed" and not events[arg].triggered:
            events[arg].succeed((pid, arg))
        elif what == "fail" and not events[arg].triggered:
            events[arg].fail(Boom(pid, arg))
        elif what == "interrupt" and other is not None and other.is_alive:
            other.interrupt((pid, env.now))
        return None


def simulate(env_class: type, programs: list, until) -> tuple:
    env = env_class()
    model = Model(env, programs)
    target = model.procs[0] if until == "proc0" else until
    results = [run_once(env, target)]
    if until is not None:  # and on to the end: what stopping left (the callbacks after the stop) runs
        model.log.append("resumed")
        results.append(run_once(env, None))
    return model.log, results, env.now, [p.is_alive for p in model.procs]


def run_once(env: simpy.Environment, until) -> tuple:
    try:
        return ("ok", env.run(until=until))
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return ("error", type(e).__name__, re.sub(" at 0x[0-9a-f]+", "", str(e)))


@settings(derandomize=True, deadline=None, max_examples=400)
@given(PROGRAMS, UNTIL)
def test_runs_as_simpy_does(programs, until):
    assert simulate(simloop.Environment, programs, until) == simulate(simpy.Environment, programs, until)


def test_processes_are_the_specialised_ones():
    env = simloop.Environment()
    proc = env.process(iter_once(env))
    assert isinstance(proc, simloop.Process)
    env.run()
    assert proc.value == "done"


def iter_once(env):
    yield env.timeout(1)
    return "done"
