"""Comparing an emulator output with a NumPy reference: dtype-aware tolerances, the worst elements.

Used by ``pyptoemu run --expect`` and :func:`pyptoemu.testing.assert_kernel_matches`, so the command
line and the test helper judge alike. Default tolerances follow the output's dtype (the project's
rule: fp32 ~1e-5 relative, fp16 ~1e-3, bf16 ~1.6e-2, fp8 one ulp; integers and booleans exact);
reductions over long axes and matmuls with a large K need looser ones, which the caller passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (rtol, atol) by NumPy dtype name; atol guards values that cancel to ~0.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float64": (1e-12, 1e-12),
    "float32": (1e-5, 1e-6),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float8_e4m3fn": (1.25e-1, 1e-3),
    "float8_e5m2": (2.5e-1, 1e-3),
}


def default_tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for an output of ``dtype``: exact (0, 0) for integers and booleans."""
    return DEFAULT_TOLERANCES.get(np.dtype(dtype).name, (0.0, 0.0))


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Why ``got`` is not ``want``: shape, or the elements outside tolerance (worst first)."""

    name: str
    message: str
    bad: int = 0
    total: int = 0
    worst: tuple[tuple[tuple[int, ...], float, float, float], ...] = ()  # (index, got, want, |diff|)

    def __str__(self) -> str:
        lines = [f"{self.name}: {self.message}"]
        for index, got, want, diff in self.worst:
            rel = diff / abs(want) if want else float("inf")
            lines.append(f"  {self.name}{list(index)}: got {got:.9g}, want {want:.9g} "
                         f"(|diff| {diff:.3g}, rel {rel:.3g})")
        return "\n".join(lines)


def compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float | None = None,
            atol: float | None = None, worst: int = 5) -> Mismatch | None:
    """None when ``got`` matches ``want`` within tolerance (NaN matches NaN), else the mismatch.

    ``want`` of another size but the same number of elements is compared element by element in
    row-major order (outputs of views that are not plain row-major come back flat).
    """
    got = np.asarray(got)
    want = np.asarray(want)
    d_rtol, d_atol = default_tolerance(got.dtype)
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    if got.shape != want.shape:
        if got.size != want.size:
            return Mismatch(name, f"shape {got.shape} ({got.size} elements) but the reference has "
                                  f"{want.shape} ({want.size} elements)")
        got = got.reshape(want.shape)
    g = got.astype(np.float64) if got.dtype != np.bool_ else got.astype(np.int64)
    w = want.astype(np.float64) if want.dtype != np.bool_ else want.astype(np.int64)
    diff = np.abs(g - w)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    ok = (diff <= atol + rtol * np.abs(w)) | both_nan | same_inf
    if ok.all():
        return None
    bad = ~ok
    score = np.where(bad, np.nan_to_num(diff, nan=np.inf, posinf=np.inf), -1.0)
    order = np.argsort(score, axis=None, kind="stable")[::-1][: min(worst, int(bad.sum()))]
    rows = tuple((tuple(int(i) for i in np.unravel_index(k, g.shape)), float(g.flat[k]), float(w.flat[k]),
                  float(diff.flat[k])) for k in order)
    return Mismatch(name, f"{int(bad.sum())} of {bad.size} elements differ beyond rtol={rtol:g}, "
                          f"atol={atol:g} (dtype {got.dtype}); worst:", int(bad.sum()), bad.size, rows)


__all__ = ["DEFAULT_TOLERANCES", "Mismatch", "compare", "default_tolerance"]
