"""Programs instrumented with the recorder: ``tcp/``, the token app over TCP sockets."""
