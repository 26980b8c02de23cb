---- MODULE Parse2 ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1
Foo == 3
====
