---- MODULE One ----
EXTENDS Integers
VARIABLE x
Init == x \in {0, 1}
A == x < 2 /\ x' = x + 1
B == x > 0 /\ x' = x - 1
Next == A \/ B
Inv == x < 2
====
