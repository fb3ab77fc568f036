"""TensorShape: a static shape with unknown rank or unknown dimensions (None)."""
from __future__ import annotations

__all__ = ["TensorShape", "as_shape", "broadcast_shapes"]


class TensorShape:
    """Static shape; ``dims is None`` means the rank is unknown (TF#25)."""

    __slots__ = ("dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        elif dims is not None:
            if isinstance(dims, int):
                dims = (dims,)
            dims = tuple(None if d is None or d == -1 else int(d) for d in dims)
        self.dims = dims

    @property
    def rank(self):
        return None if self.dims is None else len(self.dims)

    ndims = rank

    def as_list(self) -> list:
        if self.dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self.dims)

    def is_fully_defined(self) -> bool:
        return self.dims is not None and None not in self.dims

    def is_compatible_with(self, other) -> bool:
        other = as_shape(other)
        if self.dims is None or other.dims is None:
            return True
        if len(self.dims) != len(other.dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self.dims, other.dims))

    def merge_with(self, other) -> "TensorShape":
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if self.dims is None:
            return other
        if other.dims is None:
            return self
        return TensorShape(a if a is not None else b for a, b in zip(self.dims, other.dims))

    def __len__(self) -> int:
        if self.dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self.dims)

    def __iter__(self):
        if self.dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self.dims)

    def __getitem__(self, i):
        return self.dims[i]

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self.dims == other.dims

    def __hash__(self) -> int:
        return hash(self.dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self.dims is None else f"TensorShape({list(self.dims)})"

    def __str__(self) -> str:
        if self.dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self.dims)
        return f"({inner},)" if len(self.dims) == 1 else f"({inner})"


UNKNOWN = TensorShape(None)


def as_shape(value) -> TensorShape:
    return value if isinstance(value, TensorShape) else TensorShape(value)


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """numpy broadcasting on static shapes; unknown where it cannot tell."""
    if a.dims is None or b.dims is None:
        return UNKNOWN
    n = max(len(a.dims), len(b.dims))
    da = (1,) * (n - len(a.dims)) + a.dims
    db = (1,) * (n - len(b.dims)) + b.dims
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1 or x == y:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out)
