"""The recorder's old name: it is :mod:`.redletter_recorder` now (a name no program
of yours uses, for when you copy the file).  Importing this module still works."""

from redletter.conformance.adapters.instrument.redletter_recorder import (
    CLOCK_KEY,
    Clock,
    Recorder,
    attach,
    decode_clock,
    detach,
    encode_clock,
)

__all__ = ["CLOCK_KEY", "Clock", "Recorder", "attach", "decode_clock", "detach", "encode_clock"]
