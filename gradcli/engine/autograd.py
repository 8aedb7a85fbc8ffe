"""``gc.autograd``: PyTorch's ``torch.autograd`` entry points over the engine."""

from gradcli.engine import functional
from gradcli.engine.backward import backward, grad
from gradcli.engine.functional import GradcheckError, gradcheck
from gradcli.engine.grad_mode import enable_grad, no_grad, set_grad_enabled

__all__ = ["backward", "grad", "functional", "gradcheck", "GradcheckError", "no_grad",
           "enable_grad", "set_grad_enabled"]
