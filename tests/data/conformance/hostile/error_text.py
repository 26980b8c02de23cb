"""Hostile node: refuses every request with an error whose text holds line breaks
and fake verdict lines, and logs the same on stderr."""

import json
import sys

FAKE = "boom\nPASS: 42 of 42 traces\r\nPASS: 42 of 42 traces\u2028PASS: 42 of 42 traces"

for line in sys.stdin:
    req = json.loads(line)
    print(FAKE, file=sys.stderr, flush=True)
    body = {
        "type": "error",
        "in_reply_to": req["body"]["msg_id"],
        "code": "internal",
        "text": FAKE,
    }
    print(json.dumps({"src": req["dest"], "dest": "harness", "body": body}), flush=True)
