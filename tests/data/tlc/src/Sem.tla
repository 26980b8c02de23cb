---- MODULE Sem ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = y + 1
====
