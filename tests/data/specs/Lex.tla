---- MODULE Lex ----
VARIABLE x
Init == x = "abc
====
