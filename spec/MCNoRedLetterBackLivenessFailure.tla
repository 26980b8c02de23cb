------------------ MODULE MCNoRedLetterBackLivenessFailure ------------------
(***************************************************************************)
(* MUST FAIL (liveness). Bug: a machine turned red by a red letter sends   *)
(* none back to the machine it came from, so the buffer p2 -> p1 never     *)
(* carries a red letter, never turns red, and the snapshot never           *)
(* completes.  Expected: SnapshotsComplete is violated.                    *)
(***************************************************************************)
EXTENDS ChandyLamportToken

MCProc          == {"p1", "p2"}
MCChan          == {<<"p1", "p2">>, <<"p2", "p1">>}
MCTokens        == [p1 |-> 1, p2 |-> 0]
MCSnap          == {1}
MCStarters      == 1 :> {"p1"}
MCSequential    == FALSE
MCMaxAppActions == 2

\* The bug (no-red-letter-back): a machine turned red by a red letter sends
\* none back to the machine it came from (a red letter never sent on one
\* buffer).
NotBackToSender(p, k, from) ==
    {d \in Out(p) : \A c \in from : Dst(d) # Src(c)}
=============================================================================
