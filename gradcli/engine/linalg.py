"""``gc.linalg``: PyTorch's ``torch.linalg`` names for the matrix operations."""

from gradcli.engine.ops import det, solve, vector_norm
from gradcli.engine.ops import inverse as inv

__all__ = ["det", "inv", "solve", "vector_norm"]
