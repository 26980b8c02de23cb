---- MODULE Miss ----
EXTENDS Nowhere
====
