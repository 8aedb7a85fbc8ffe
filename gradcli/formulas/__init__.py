"""``gradcli.formula``: the derivatives a computation gives, as expressions of their own
(``derivative_formulas.py``); the symbolic algebra and the printer are ``lang/``'s."""
