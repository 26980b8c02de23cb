"""Apache Flink, the real engine: a keyed-count job checkpointed three ways
(aligned exactly once, unaligned exactly once, at least once with alignment
skipped), failed once at a seeded point, restored, and judged per key against
the records its source emitted.

- :mod:`.workload`: what a run is and which records the source emits (standard
  library only: ``job.py`` imports it inside the Flink environment too);
- ``job.py``: the PyFlink job, run by the Flink environment's Python as a child
  process (never imported by the kit);
- :mod:`.runner`: find the Flink environment, run a job, run a campaign;
- :mod:`.evidence`: read what a run left behind (sink output, the job's side
  notes, Flink's log);
- :mod:`.judge`: each run against the emitted records, each mode against its
  guarantee;
- :mod:`.results`: results.json, report.html and the comparison page's data.
"""
