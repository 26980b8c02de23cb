"""The rendering room: pictures and pages made from the model's runs.

Space-time diagrams (SVG), the HTML run report and the proof explorer live here,
used alike by the harness (``conformance``) and the command line.  It sits above
the model (it draws :mod:`redletter.python_model` states and traces) and below the
harness, so it takes plain data and never imports ``conformance`` or ``pipeline``.
"""
