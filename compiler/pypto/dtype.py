"""Element data types and the promotion rule."""

from __future__ import annotations

import enum

import numpy as np


class DataType(enum.Enum):
    """Element types with the codes of the language spec (§2.1)."""

    BOOL = 0x00
    INT4 = 0x10
    INT8 = 0x11
    INT16 = 0x12
    INT32 = 0x13
    INT64 = 0x14
    INDEX = 0x15
    UINT4 = 0x20
    UINT8 = 0x21
    UINT16 = 0x22
    UINT32 = 0x23
    UINT64 = 0x24
    FP4 = 0x30
    FP8E4M3FN = 0x31
    FP8E5M2 = 0x32
    FP16 = 0x33
    FP32 = 0x34
    BF16 = 0x40
    HF4 = 0x41
    HF8 = 0x42

    def code(self) -> int:
        return self.value

    @property
    def bits(self) -> int:
        return _INFO[self][0]

    @property
    def nbytes(self) -> int:
        return (self.bits + 7) // 8

    @property
    def mlir(self) -> str:
        name = _INFO[self][1]
        if name is None:
            raise ValueError(f"dtype {self.name} has no PTO spelling")
        return name

    @property
    def cpp(self) -> str:
        name = _INFO[self][2]
        if name is None:
            raise ValueError(f"dtype {self.name} has no C++ spelling")
        return name

    @property
    def numpy(self) -> np.dtype:
        name = _INFO[self][3]
        if name is None:
            raise ValueError(f"dtype {self.name} has no NumPy equivalent")
        if name == "bfloat16":
            import ml_dtypes

            return np.dtype(ml_dtypes.bfloat16)
        return np.dtype(name)

    def is_float(self) -> bool:
        return 0x30 <= self.value <= 0x4F

    def is_signed(self) -> bool:
        return 0x10 <= self.value <= 0x1F

    def is_unsigned(self) -> bool:
        return 0x20 <= self.value <= 0x2F

    def is_int(self) -> bool:
        return self.is_signed() or self.is_unsigned()

    def int_range(self) -> tuple[int, int]:
        """The values an integer type holds: ``(-2**(bits-1), 2**(bits-1) - 1)`` signed (INDEX is
        64-bit signed), ``(0, 2**bits - 1)`` unsigned."""
        if not self.is_int():
            raise ValueError(f"dtype {self.name} is not an integer type")
        if self.is_unsigned():
            return 0, (1 << self.bits) - 1
        return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1

    def __str__(self) -> str:
        return "bfloat16" if self is DataType.BF16 else self.name.lower()

    @staticmethod
    def from_code(code: int) -> DataType:
        return DataType(code)


_INFO: dict[DataType, tuple[int, str | None, str | None, str | None]] = {
    DataType.BOOL: (1, "i1", "bool", "bool"),
    DataType.INT4: (4, None, None, None),
    DataType.INT8: (8, "i8", "int8_t", "int8"),
    DataType.INT16: (16, "i16", "int16_t", "int16"),
    DataType.INT32: (32, "i32", "int32_t", "int32"),
    DataType.INT64: (64, "i64", "int64_t", "int64"),
    DataType.INDEX: (64, "index", "int64_t", "int64"),
    DataType.UINT4: (4, None, None, None),
    DataType.UINT8: (8, "ui8", "uint8_t", "uint8"),
    DataType.UINT16: (16, "ui16", "uint16_t", "uint16"),
    DataType.UINT32: (32, "ui32", "uint32_t", "uint32"),
    DataType.UINT64: (64, "ui64", "uint64_t", "uint64"),
    DataType.FP4: (4, None, None, None),
    DataType.FP8E4M3FN: (8, "f8E4M3FN", None, None),
    DataType.FP8E5M2: (8, "f8E5M2", None, None),
    DataType.FP16: (16, "f16", "half", "float16"),
    DataType.FP32: (32, "f32", "float", "float32"),
    DataType.BF16: (16, "bf16", "bfloat16_t", "bfloat16"),
    DataType.HF4: (4, None, None, None),
    DataType.HF8: (8, None, None, None),
}


def promote(a: DataType, b: DataType) -> DataType:
    """Shaped-op promotion (§2.1): equal -> a; one float -> it; wider; same width -> signed; else a."""
    if a is b:
        return a
    if a.is_float() != b.is_float():
        return a if a.is_float() else b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    if a.is_signed() != b.is_signed():
        return a if a.is_signed() else b
    return a


def from_numpy(dt: np.dtype) -> DataType:
    """The DataType of a NumPy dtype (used by the runtime to check arguments)."""
    for d, info in _INFO.items():
        if info[3] is not None and d is not DataType.INDEX and d.numpy == np.dtype(dt):
            return d
    raise ValueError(f"no PyPTO dtype for NumPy dtype {dt}")
