"""Hostile node: answers every request with the id of the one before."""

import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    body = {"type": "init_ok", "in_reply_to": req["body"]["msg_id"] - 1}
    print(json.dumps({"src": req["dest"], "dest": "harness", "body": body}), flush=True)
