"""Hostile node: answers init with a reply id of 5,000 digits."""

import sys

sys.stdin.readline()
sys.stdout.write('{"src": "p1", "dest": "harness", "body": {"type": "init_ok", "in_reply_to": '
                 + "9" * 5000 + "}}\n")  # fmt: skip
sys.stdout.flush()
sys.stdin.readline()
