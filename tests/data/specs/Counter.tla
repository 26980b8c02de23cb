---- MODULE Counter ----
\* A counter with two actions, instantiated by Instanced.tla (see test_tlc_runs.py).
EXTENDS Naturals
CONSTANT Max  \* the counter's bound
VARIABLE x    \* the counter
Init == x = 0
Up == x < Max /\ x' = x + 1
Down == x > 0 /\ x' = x - 1
Next == Up \/ Down
Spec == Init /\ [][Next]_x
====
