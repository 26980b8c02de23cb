"""Hostile node: answers init, then crashes (exit 7) on the next request."""

import json
import sys

for n, line in enumerate(sys.stdin):
    req = json.loads(line)
    if n == 0:
        body = {"type": "init_ok", "in_reply_to": req["body"]["msg_id"]}
        print(json.dumps({"src": req["dest"], "dest": "harness", "body": body}), flush=True)
        continue
    print("crash: simulated crash on the second request", file=sys.stderr, flush=True)
    sys.exit(7)
