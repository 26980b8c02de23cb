"""Hostile node: answers init, then closes its stdout and stays alive."""

import json
import os
import sys
import time

req = json.loads(sys.stdin.readline())
body = {"type": "init_ok", "in_reply_to": req["body"]["msg_id"]}
print(json.dumps({"src": req["dest"], "dest": "harness", "body": body}), flush=True)
print("close_stdout: closing stdout and staying alive", file=sys.stderr, flush=True)
os.close(1)
sys.stdout = open(os.devnull, "w")  # noqa: SIM115
time.sleep(3600)
