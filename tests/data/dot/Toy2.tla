---- MODULE Toy2 ----
EXTENDS Integers, Sequences, TLC
VARIABLES x, big
Init == /\ x \in {0, 1}
        /\ big = [i \in 1..3 |-> "a\nb\tc\\d\"e"]
Inc(i) == /\ x < 3 /\ x' = x + i /\ big' = [j \in 1..40 |-> [k \in {"alpha", "beta"} |-> <<j, {j, j+1}>>]]
Reset == /\ x >= 3 /\ x' = 0 /\ UNCHANGED big
Stay == UNCHANGED <<x, big>>
Next == \/ \E i \in 1..2 : Inc(i)
        \/ Reset
        \/ Stay
====
