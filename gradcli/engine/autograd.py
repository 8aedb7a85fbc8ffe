"""``gc.autograd``: PyTorch's ``torch.autograd`` entry points over the engine."""

from . import functional
from .backward import backward, grad
from .functional import GradcheckError, gradcheck
from .grad_mode import enable_grad, no_grad, set_grad_enabled

__all__ = ["backward", "grad", "functional", "gradcheck", "GradcheckError", "no_grad",
           "enable_grad", "set_grad_enabled"]
