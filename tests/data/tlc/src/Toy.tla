---- MODULE Toy ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 5 /\ x' = x + 1
Spec == Init /\ [][Next]_x /\ WF_x(Next)
Inv == x < 10
BadInv == x < 3
Grow == [][x' > x]_x
Shrink == [][x' < x]_x
Live == <>(x = 7)
Neg == x > 0
PropInit == x > 0
====
