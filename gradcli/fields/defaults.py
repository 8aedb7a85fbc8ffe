"""Defaults shared by the commands and the picture options (importing nothing heavy, so the
command-line declaration can read them at start-up)."""

#: updates a descent makes at most unless its ``steps`` say otherwise
STEPS = 1000
#: the time grid of a flow: start, stop, number of times (so 1000 fixed steps)
TIMES = (0.0, 10.0, 1001)
#: the optimisers of ``descend`` (gradcli.fields.optim) and the flows' steppers
METHODS = ("gd", "momentum", "adam", "adamw", "rmsprop", "newton")
FLOW_METHODS = ("rk4", "euler", "dopri5")
#: dopri5's default tolerances: tighter than ode45's 1e-3/1e-6, for a demanding user
RTOL, ATOL = 1e-6, 1e-9
