---- MODULE Toy ----
EXTENDS Integers, Sequences, TLC
CONSTANTS a, b
VARIABLES x, s, r, f, q, m
Init == /\ x = 0
        /\ s = {"zz", "b", "a", "ab", "B", "Ab", ""}
        /\ r = [zq |-> 1, a |-> <<>>, m |-> {}, ca |-> 2]
        /\ f = (3 :> "x" @@ 5 :> "y")
        /\ q = "he said \"hi\"\\ ok"
        /\ m = {b, a}
Next == \/ /\ x < 2 /\ x' = x + 1
           /\ s' = {<<x, -1>>, <<-x, 2>>, <<x>>, <<>>, <<1,2,3>>}
           /\ UNCHANGED <<r, f, q, m>>
        \/ /\ x = 2 /\ x' = -3
           /\ s' = {[p |-> 1], [p |-> -2, q |-> TRUE], [a |-> 1], [p |-> 0, q |-> FALSE]}
           /\ r' = [y \in {a, b} |-> x]
           /\ f' = [i \in 1..3 |-> i]
           /\ q' = <<TRUE, "t\\n", {3, -1, 10, 2}, {{1}, {}, {2,1}, {0, 5}}>>
           /\ m' = (-1 :> 1 @@ 2 :> 3)
        \/ /\ x = -3 /\ x' = -4
           /\ s' = {TRUE, FALSE}
           /\ r' = [i \in 0..2 |-> i]
           /\ f' = [i \in {"a", "b"} |-> i]
           /\ q' = <<"a">> \o <<"b">>
           /\ m' = (a :> 1 @@ b :> 2)
        \/ /\ x = -4 /\ x' = -5
           /\ s' = {{"a"}, {}}
           /\ r' = [i \in {} |-> i]
           /\ f' = [i \in {<<1>>, <<2>>} |-> i]
           /\ q' = [i \in {1} |-> i]
           /\ m' = [i \in {2} |-> i]
====
