---- MODULE Rt ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + "a"
Spec == Init /\ [][Next]_x
====
