---- MODULE MCToy ----
\* A counter to 5: six distinct states, depth 6.  Used by the check tests.
EXTENDS Naturals
VARIABLE x  \* the counter
Init == x = 0
Next == x < 5 /\ x' = x + 1
Spec == Init /\ [][Next]_x
Small == x < 10   \* holds
Tiny == x < 3     \* fails in 4 steps
====
