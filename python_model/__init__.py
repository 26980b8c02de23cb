"""The Python reference model of ChandyLamport.tla (see docs/model.md).

Its hot modules run compiled with mypyc when ``make native`` built them from exactly
these sources (:mod:`redletter.python_model.native`), else as the Python they are.
"""

from redletter.python_model.native import activate

activate(__path__)
