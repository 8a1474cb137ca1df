"""The compiler's InsertSync is the contract's planner (ptoisa.sync) behind an adapter: it plans
through ptoisa.sync.insert.plan_function, and what it writes keeps the flag invariant when read back
from the generated .pto text, independently of the plan."""

import glob
import importlib
import os

import pytest
from conftest import example
from user_programs.helpers import load_file

import ptoisa.sync.insert as shared
from ptoisa.machine import load_machine
from ptoisa.sync.pto_text import check_module, stream
from ptoisa.sync.verify import SetWait
from ptoisa.text.parser import parse_module
from pypto.ir.compiler import compile_program

compiler_pass = importlib.import_module("pypto.passes.insert_sync")  # the name is also a function
PROGRAMS = [("row_softmax", "RowSoftmax"), ("matmul", "Gemm"), ("tile_add", "TileAdd"), ("iter_args_if", "BlockSum")]
MACHINE = load_machine("a2a3")


def _flags(fn) -> int:
    def count(items) -> int:
        n = 0
        for x in items:
            if isinstance(x, SetWait):
                n += 1
            elif isinstance(x, list):
                n += count(x)
            else:
                for sub in getattr(x, "arms", []) + [getattr(x, "body", []), getattr(x, "cond", [])]:
                    n += count(sub)
        return n

    return count(stream(fn))


@pytest.mark.parametrize("name,cls", PROGRAMS)
def test_compiled_sync_keeps_the_flag_invariant(name, cls):
    out = compile_program(getattr(example(name), cls), with_cpp=False)
    assert out.pto
    for text in out.pto.values():
        module = parse_module(text)
        assert check_module(module, MACHINE) == []


def test_the_pass_plans_with_the_shared_planner(monkeypatch):
    calls = []

    def spy(model, machine, *args, **kwargs):
        calls.append(model.name)
        return shared.plan_function(model, machine, *args, **kwargs)

    monkeypatch.setattr(compiler_pass, "plan_function", spy)
    out = compile_program(example("row_softmax").RowSoftmax, with_cpp=False)
    assert calls == ["softmax_rows"]
    fn = parse_module(next(iter(out.pto.values()))).functions[0]
    assert _flags(fn) >= 6  # the pipeline's flags came from that plan


def test_every_user_program_compiles_to_sync_that_keeps_the_invariant():
    """The 60-odd user-style programs (loops, ifs with yields, whiles, scopes, cube and vector
    kernels, hand-written sync): the sync the compiler writes passes the flag check when read back."""
    seen = 0
    for path in sorted(glob.glob(os.path.join(os.path.dirname(__file__), "user_programs", "progs", "*.py"))):
        for name, obj in vars(load_file(path)).items():
            if not hasattr(obj, "functions_list"):
                continue
            seen += 1
            for kernel, text in compile_program(obj, with_cpp=False).pto.items():
                assert check_module(parse_module(text), MACHINE) == [], (path, name, kernel)
    assert seen >= 50
