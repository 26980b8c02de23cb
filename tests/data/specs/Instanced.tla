---- MODULE Instanced ----
\* Counter's Spec through an INSTANCE with a substitution: TLC 2.15 sees one action.
VARIABLE x  \* Counter's variable
INSTANCE Counter WITH Max <- 2
====
