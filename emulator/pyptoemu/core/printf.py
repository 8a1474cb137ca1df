"""C ``printf`` formatting of ``pto.print`` (pto-text-format §4.11: "printf of one scalar").

Python's ``%`` operator differs from C's where a kernel author notices: ``%x`` of -1 gives ``-1``
(C: ``ffffffff`` for a 32-bit int), ``%#o`` gives ``0o17`` (C: ``017``), ``%hhd`` does not narrow,
and a format whose conversions do not match its values raises. So the format is checked once, when
the op is bound: one conversion per value, integer conversions for integer values and floating ones
for float values. Integers are printed from their bits as C sees them after promotion to int (or
narrowed by ``hh``/``h``). What C leaves undefined (too few or too many values, ``%d`` of a float,
``%s`` of a number, ``*`` widths) is an error, not a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d*))?"
                   r"(?P<length>hh|h|ll|l|j|z|t|L|q)?(?P<conv>.?)")
_INT_CONVS = "dicouxX"
_UNSIGNED_CONVS = "ouxX"
_FLOAT_CONVS = "eEfFgG"
# bits of an integer value by its type name; index is 64-bit (spec §2.1)
_WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "index": 64, "ui8": 8, "ui16": 16, "ui32": 32,
          "ui64": 64}
_FLOATS = ("f16", "bf16", "f32", "f64")
_NARROW = {"hh": 8, "h": 16}

# a conversion: (a Python %-spec or a formatter of the value, the C conversion, bits of an integer value)
Piece = tuple[str | Callable[[int], str], str, int]


def compile_format(fmt: str, types: list[str]) -> Callable[[list], str]:
    """A function formatting values of ``types`` (scalar type names) as C's printf(fmt, ...) would.
    Raises ValueError saying what in the format cannot be printed that way."""
    pieces: list[str | Piece] = []  # literal text and conversions, in order
    pos = n = 0
    for m in _SPEC.finditer(fmt):
        pieces.append(fmt[pos:m.start()])
        pos = m.end()
        if m["conv"] == "%" and not (m["flags"] or m["width"] or m["prec"] is not None or m["length"]):
            pieces.append("%")
            continue
        if n >= len(types):
            raise ValueError(f"the format has more conversions than the {len(types)} value(s) given")
        pieces.append(_conversion(m, types[n], n + 1))
        n += 1
    pieces.append(fmt[pos:])
    if n != len(types):
        raise ValueError(f"the format has {n} conversion(s) for {len(types)} value(s)")

    def render(values: list) -> str:
        out = []
        it = iter(values)
        for p in pieces:
            if isinstance(p, str):
                out.append(p)
                continue
            spec, conv, bits = p
            v = next(it)
            if conv in _INT_CONVS:
                v = int(v) & ((1 << bits) - 1)  # the value's bits at its (promoted or narrowed) width
                if conv not in _UNSIGNED_CONVS and conv != "c" and bits > 1 and v >> (bits - 1):
                    v -= 1 << bits  # signed conversions read them as two's complement
            else:
                v = float(v)
            out.append(spec(v) if callable(spec) else spec % v)
        return "".join(out)

    return render


def _conversion(m: re.Match, ty: str, k: int) -> Piece:
    """The conversion ``m`` of value number ``k`` (of type ``ty``), or ValueError."""
    conv, flags = m["conv"], m["flags"]
    where = f"conversion '{m.group(0)}'"
    if m["width"] == "*" or m["prec"] == "*":
        raise ValueError(f"{where}: a '*' width or precision takes a value of its own; write the number")
    if conv not in _INT_CONVS + _FLOAT_CONVS:
        raise ValueError(f"{where} is not one pto.print can print (integers: %d %i %u %o %x %X %c; "
                         f"floats: %f %F %e %E %g %G)")
    if conv in _INT_CONVS and ty not in _WIDTH:
        raise ValueError(f"{where} prints an integer but value {k} is {ty} (use %f, %e or %g)")
    if conv in _FLOAT_CONVS and ty not in _FLOATS:
        raise ValueError(f"{where} prints a floating-point value but value {k} is {ty} (use %d, %u or %x)")
    bits = max(_WIDTH.get(ty, 64), 32)  # C promotes a narrower integer to int
    if conv == "c":
        bits = 8  # an unsigned char
    elif m["length"] in _NARROW:  # %hhd, %hx: the value as a char / short
        bits = min(bits, _NARROW[m["length"]])
    if conv == "o" and "#" in flags:  # C's alternate octal is a leading 0, Python's a 0o: made by hand
        return _alt_octal(flags, int(m["width"] or 0), m["prec"]), conv, bits
    prec = "" if m["prec"] is None else "." + (m["prec"] or "0")
    return f"%{flags}{m['width'] or ''}{prec}{'d' if conv == 'u' else conv}", conv, bits


def _alt_octal(flags: str, width: int, prec: str | None) -> Callable[[int], str]:
    """C's ``%#o``: the octal digits (at least ``prec`` of them) with a leading 0, then the width."""
    def fmt(v: int) -> str:
        digits = format(v, "o").rjust(int(prec or 0), "0")
        if not digits.startswith("0"):
            digits = "0" + digits
        if "-" in flags:
            return digits.ljust(width)
        return digits.rjust(width, "0" if "0" in flags and prec is None else " ")
    return fmt
