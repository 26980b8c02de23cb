"""Hostile node: answers init, then, on the next request, starts a child that
allocates memory without bound and waits for it, never replying.  The OOM killer
stops the child, not the node: the harness sees a node that does not reply."""

import json
import os
import sys
import time

for n, line in enumerate(sys.stdin):
    req = json.loads(line)
    if n == 0:
        body = {"type": "init_ok", "in_reply_to": req["body"]["msg_id"]}
        print(json.dumps({"src": req["dest"], "dest": "harness", "body": body}), flush=True)
        continue
    print("oom_child: a child allocates without bound", file=sys.stderr, flush=True)
    pid = os.fork()
    if pid == 0:
        hoard = []
        while True:
            hoard.append(bytearray(10_000_000))
    os.waitpid(pid, 0)
    print("oom_child: the child is gone; hanging", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)
