"""Programs instrumented with the recorder: ``chat/`` (asyncio), ``bank/`` (threads),
``goring/`` (Go), judged without a model; ``tcp/``, the token app over TCP sockets."""
