---- MODULE Toy3 ----
EXTENDS Integers, Sequences, TLC
VARIABLES a, b, c, d, e, g, h
Init == /\ a = 1..3
        /\ b = SUBSET {1, 2}
        /\ c = [{1, 2} -> {3}]
        /\ d = {1, 2} \X {3}
        /\ e = [i \in {"a b", "1", ""} |-> i]
        /\ g = [x : {1, 2}, y : {"u"}]
        /\ h = <<"\r\f", 2..1, [i \in 0..1 |-> i], -0>>
Next == UNCHANGED <<a, b, c, d, e, g, h>>
====
