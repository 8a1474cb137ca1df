"""``@pl.function``, ``@pl.program`` and ``@pl.inline``."""

from __future__ import annotations

import sys
from typing import Any

from pypto.enums import FunctionType
from pypto.errors import ParseError, Span
from pypto.ir.expr import GlobalVar
from pypto.ir.stmt import Program
from pypto.language.parser import FunctionParser, ProgramContext, signature_of
from pypto.language.source import InlineFunction, Namespace, SourceInfo


def _frames(depth: int, count: int = 4) -> list[dict]:
    """Locals of the calling frames (class body, enclosing function, ...), innermost first."""
    out = []
    frame = sys._getframe(depth + 1)
    while frame is not None and len(out) < count:
        if frame.f_code.co_name == "<module>":
            break
        out.append(dict(frame.f_locals))
        frame = frame.f_back
    return out


def _is_method(pyfunc: Any) -> bool:
    parts = pyfunc.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


class PendingFunction:
    """A ``@pl.function`` method awaiting its ``@pl.program`` (parsed in two phases)."""

    def __init__(self, pyfunc: Any, func_type: FunctionType, strict_ssa: bool, frames: list[dict]):
        self.pyfunc = pyfunc
        self.func_type = func_type
        self.strict_ssa = strict_ssa
        self.frames = frames

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ParseError(f"{self.pyfunc.__name__} is a PyPTO function; compile it with pl.program / ir.compile")


def _parse_function(pyfunc: Any, func_type: FunctionType, strict_ssa: bool, frames: list[dict]) -> Any:
    src = SourceInfo(pyfunc)
    ns = Namespace(pyfunc, frames)
    sig = signature_of(src, ns, is_method=False)
    return FunctionParser(src, ns, sig, func_type, None, strict_ssa).parse()


def function(func: Any = None, *, type: FunctionType = FunctionType.Opaque, strict_ssa: bool = False) -> Any:
    """Parse a function into an ``ir.Function`` (deferred to ``@pl.program`` for methods)."""

    def wrap(pyfunc: Any, depth: int) -> Any:
        frames = _frames(depth + 1)
        if _is_method(pyfunc):
            return PendingFunction(pyfunc, type, strict_ssa, frames)
        return _parse_function(pyfunc, type, strict_ssa, frames)

    if func is not None:
        return wrap(func, 1)
    return lambda f: wrap(f, 1)


def inline(func: Any) -> InlineFunction:
    return InlineFunction(func, _frames(1))


def program(cls: Any = None, *, strict_ssa: bool = False) -> Any:
    """Parse a class of ``@pl.function`` methods into an ``ir.Program``."""

    def wrap(klass: Any, depth: int) -> Program:
        outer = _frames(depth + 1)
        pending = [(n, v) for n, v in vars(klass).items() if isinstance(v, PendingFunction)]
        if not pending:
            raise ParseError(f"@pl.program class '{klass.__name__}' has no @pl.function methods")
        ctx = ProgramContext({})
        parsed = []
        for name, pf in pending:
            src = SourceInfo(pf.pyfunc)
            ns = Namespace(pf.pyfunc, pf.frames + outer)
            sig = signature_of(src, ns, is_method=True)
            ctx.signatures[name] = (GlobalVar(name), sig)
            ctx.kinds[name] = pf.func_type
            parsed.append((pf, src, ns, sig))
        funcs = []
        for pf, src, ns, sig in parsed:
            funcs.append(FunctionParser(src, ns, sig, pf.func_type, ctx, strict_ssa or pf.strict_ssa).parse())
        funcs.extend(fn for _, fn in ctx.externals.values())
        gvs = {n: gv for n, (gv, _) in ctx.signatures.items()}
        gvs.update({n: gv for n, (gv, _) in ctx.externals.items()})
        first = parsed[0][1]
        return Program(tuple(funcs), klass.__name__, Span(first.filename, first.first_line, 1), gvs)

    if cls is not None:
        return wrap(cls, 1)
    return lambda c: wrap(c, 1)
