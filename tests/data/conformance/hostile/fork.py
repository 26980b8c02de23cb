"""Hostile node: forks a child that keeps running (appending to a heartbeat file,
holding stdout open), then exits with status 3 without answering.  With
"setsid" the child also leaves the process group."""

import os
import sys
import time

heartbeat = sys.argv[1]
if os.fork() == 0:
    if len(sys.argv) > 2 and sys.argv[2] == "setsid":
        os.setsid()
    while True:
        with open(heartbeat, "a") as f:
            f.write(".")
        time.sleep(0.02)
print("fork: left a child behind", file=sys.stderr, flush=True)
sys.exit(3)
