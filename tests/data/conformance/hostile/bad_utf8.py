"""Hostile node: answers init with bytes that are not UTF-8."""

import sys

sys.stdin.readline()
sys.stdout.buffer.write(b'{"src": "p1", "dest": "harness", "body": \xff\xfe\xfd}\n')
sys.stdout.buffer.flush()
sys.stdin.readline()
