"""``gradcli explore``: a local web page to touch the gradient, computed by the engine.

``server.py`` serves the page and its requests (standard library, 127.0.0.1, a token and
a Host check), ``worker.py`` runs each computation in a process the server can end,
``compute.py`` is what is computed (the commands' own functions), ``page.py`` with
``explore.js`` and ``explore.css`` is the page. Imported only by the explore command.
"""
