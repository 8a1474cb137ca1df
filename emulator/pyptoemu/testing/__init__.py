"""Helpers for testing your own kernels against NumPy: ``assert_kernel_matches``, hypothesis
strategies (:mod:`pyptoemu.testing.strategies`) and a pytest plugin (:mod:`pyptoemu.testing.plugin`).

``assert_kernel_matches`` runs a kernel, computes the reference with NumPy and compares every
output with dtype-aware tolerances (:mod:`pyptoemu.compare`), failing with the worst elements. A
kernel that faults or races raises :class:`pyptoemu.KernelFault`, as ``pyptoemu.run`` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ptoisa.text import ast as A
from pyptoemu.api import run
from pyptoemu.compare import compare, default_tolerance
from pyptoemu.result import RunResult

Reference = Callable[..., Any] | Mapping[str, Any]


def _by_index(names) -> list[str]:
    return sorted(names, key=lambda k: int(k[3:]) if k[3:].isdigit() else 1 << 30)


def expected_outputs(reference: Reference, inputs: Mapping[str, Any], args: Mapping[str, Any],
                     written: list[str]) -> dict[str, np.ndarray]:
    """The reference's outputs by argument name.

    ``reference`` is a mapping (``{"arg2": array}``) or a callable receiving the kernel's given
    arguments positionally in ``argN`` order (inputs and scalar args merged). A callable may return a
    mapping, one array (the kernel's only output) or a tuple (the written outputs in ``argN`` order).
    """
    if isinstance(reference, Mapping):
        return {k: np.asarray(v) for k, v in reference.items()}
    merged = {**dict(args), **dict(inputs)}
    got = reference(*[merged[k] for k in _by_index(merged)])
    if isinstance(got, Mapping):
        return {k: np.asarray(v) for k, v in got.items()}
    outs = list(got) if isinstance(got, tuple) else [got]
    if len(outs) != len(written):
        raise AssertionError(f"the reference returned {len(outs)} array(s) but the kernel wrote "
                             f"{len(written)} output(s): {', '.join(written) or 'none'}; return a dict "
                             f"{{'argN': array}} to say which is which")
    return {name: np.asarray(v) for name, v in zip(written, outs, strict=True)}


def assert_kernel_matches(
    kernel: str | os.PathLike | A.Module,
    reference: Reference,
    inputs: Mapping[str, Any] | None = None,
    args: Mapping[str, Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    **run_options: Any,
) -> RunResult:
    """Run ``kernel`` and assert each output equals the NumPy ``reference`` within tolerance.

    ``inputs``/``args`` are as for :func:`pyptoemu.run` (``{"arg0": array}``); ``run_options`` go to
    it too (``machine``, ``entry``, ``sync``, ``trace`` ...). Tolerances default by the output's dtype
    (fp32 1e-5, fp16 1e-3, bf16 1.6e-2, integers exact); pass looser ones for long reductions and
    matmuls (the error grows with K). Returns the run's result for further checks (cycles, findings).
    """
    inputs = dict(inputs or {})
    args = dict(args or {})
    result = run(kernel, inputs=inputs, args=args, **run_options)
    written = _by_index(result.outputs)
    want = expected_outputs(reference, inputs, args, written)
    problems = []
    for name, expected in want.items():
        if name not in result.outputs:
            problems.append(f"{name}: the kernel did not write it (it wrote: {', '.join(written) or 'nothing'})")
            continue
        mismatch = compare(name, result.outputs[name], expected, rtol=rtol, atol=atol)
        if mismatch is not None:
            problems.append(str(mismatch))
    if problems:
        where = f"\ntrace: {result.trace}" if result.trace else ""
        raise AssertionError("kernel output differs from the NumPy reference:\n" + "\n".join(problems) + where)
    return result


__all__ = ["assert_kernel_matches", "default_tolerance", "expected_outputs"]
