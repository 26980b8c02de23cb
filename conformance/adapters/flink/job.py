"""The keyed-count job, run by the kit inside the Flink virtual environment:
``.venv-flink/bin/python job.py CONFIG.json`` (one run; see ``runner.py``).

It is a script, not a module of the kit: the Flink environment has PyFlink and
not the kit, so it imports the standard library, PyFlink and its sibling
``workload.py`` only (shipped to the Python workers with ``add_python_file``).

The dataflow (parallelism ``p`` >= 2 everywhere)::

    NumberSequenceSource(1..N) -> tag (key, id) --key_by--> count --> FileSink
         p subtasks, replayable      p subtasks  shuffle   p subtasks, each reads p channels

- the source is Flink's ``NumberSequenceSource``: its splits' positions are in
  every checkpoint, so a restore replays each split from its recorded position;
- ``tag`` pairs each id with its key; on the last source subtask it also
  spends ``skew_ms`` per record (0: not at all), so that input is slower and
  its barriers reach the counter after the others' (inputs at different
  speeds: when alignment is skipped, the counter goes on with the fast inputs'
  records of checkpoint n+1 before it takes checkpoint n);
- ``count`` keeps, per key, the multiset of record ids it has counted (keyed
  state, so part of every checkpoint), fails once on record ``fail_at`` in its
  first attempt (restart strategy: fixed delay, one attempt, so Flink restores
  the latest completed checkpoint), and at the end of the input (an event-time
  timer fired by the final watermark) emits its final state for the key;
- the sink is Flink's ``FileSink``, committed on checkpoints (exactly once), so
  the committed part files hold each key's final state once.

Side files for the kit (``events/``, one per operator subtask and attempt):
the first record each source subtask emits in each attempt (where a restore
replays from), the injected failure, the state each key had when the counter
first saw it after a restore, and each final state the counter emitted (so a
key the sink has no line for can be told from one whose timer never fired).
``job.json`` says how the job ended.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import JobConfig, key_of  # noqa: E402

#: The event time of the timer that emits a key's final state: fired only by
#: the final watermark Flink sends when the bounded source ends.
END_OF_INPUT = 2**62


def _event_file(out: str, op: str, subtask: int, attempt: int) -> TextIO:
    path = Path(out) / "events" / f"{op}-{subtask}-{attempt}.ndjson"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("a", encoding="utf-8")


def build(cfg: JobConfig) -> Any:
    """The job's environment, with the dataflow built on it."""
    from pyflink.common import Configuration, Encoder, Types, WatermarkStrategy
    from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment
    from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy
    from pyflink.datastream.connectors.number_seq import NumberSequenceSource
    from pyflink.datastream.functions import KeyedProcessFunction, MapFunction, RuntimeContext
    from pyflink.datastream.state import ValueStateDescriptor

    out = cfg.out

    class Tag(MapFunction):  # type: ignore[misc]
        """Record id -> (key, id); logs the first id it sees in each attempt."""

        def open(self, ctx: RuntimeContext) -> None:
            self.subtask = ctx.get_index_of_this_subtask()
            self.attempt = ctx.get_attempt_number()
            self.first = True
            # The last source subtask is the slow input: its barriers reach the
            # counter later than the others', the situation seed 002 describes.
            self.slow = cfg.skew_ms > 0 and self.subtask == cfg.parallelism - 1

        def map(self, i: int) -> tuple[str, int]:
            if self.first:
                self.first = False
                with _event_file(out, "source", self.subtask, self.attempt) as f:
                    f.write(
                        json.dumps(
                            {
                                "event": "first",
                                "subtask": self.subtask,
                                "attempt": self.attempt,
                                "id": i,
                                "t": time.time(),
                            }
                        )
                        + "\n"
                    )
            if self.slow:
                time.sleep(cfg.skew_ms / 1000.0)
            return key_of(i, cfg.keys), i

    class Count(KeyedProcessFunction):  # type: ignore[misc]
        """Per key, the multiset of counted ids; fails once; emits the final state."""

        def open(self, ctx: RuntimeContext) -> None:
            self.subtask = ctx.get_index_of_this_subtask()
            self.attempt = ctx.get_attempt_number()
            # A ValueState holding a dict, not a MapState: in our first runs,
            # PyFlink 2.3 could not read a MapState after a restore on the heap
            # backend ("A serializer has already been registered for the state;
            # re-registration is not allowed").
            self.ids = ctx.get_state(ValueStateDescriptor("ids", Types.PICKLED_BYTE_ARRAY()))
            self.seen: set[str] = set()
            self.log = _event_file(out, "count", self.subtask, self.attempt)

        def close(self) -> None:
            self.log.close()

        def process_element(self, value: tuple[str, int], ctx: KeyedProcessFunction.Context):  # type: ignore[no-untyped-def]
            key, i = value
            state = self.ids.value()
            if key not in self.seen:
                self.seen.add(key)
                if self.attempt > 0:
                    restored = state or {}
                    self.log.write(
                        json.dumps(
                            {
                                "event": "restored",
                                "key": key,
                                "subtask": self.subtask,
                                "attempt": self.attempt,
                                "count": sum(restored.values()),
                                "distinct": len(restored),
                                "t": time.time(),
                            }
                        )
                        + "\n"
                    )
                    self.log.flush()
            if self.attempt == 0 and i == cfg.fail_at:
                self.log.write(
                    json.dumps(
                        {
                            "event": "failure",
                            "key": key,
                            "id": i,
                            "subtask": self.subtask,
                            "attempt": self.attempt,
                            "t": time.time(),
                        }
                    )
                    + "\n"
                )
                self.log.flush()
                raise RuntimeError(f"redletter: injected failure on record {i}")
            state = state or {}
            # Fired by the final watermark at the end of the input.  Registered on
            # every record (timers are set-like, so this is one timer per key), not
            # on the key's first record only: once, a checkpoint taken right after
            # a key's first records held their state update but not the timer
            # registered in the same call, and the restored key never emitted its
            # final state (tests/data/flink/aligned-timer-lost).
            ctx.timer_service().register_event_time_timer(END_OF_INPUT)
            state[i] = state.get(i, 0) + 1
            self.ids.update(state)
            if cfg.delay_ms > 0:
                time.sleep(cfg.delay_ms / 1000.0)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):  # type: ignore[no-untyped-def]
            state = self.ids.value() or {}
            self.log.write(
                json.dumps(
                    {
                        "event": "emitted",
                        "key": ctx.get_current_key(),
                        "subtask": self.subtask,
                        "attempt": self.attempt,
                        "count": sum(state.values()),
                        "t": time.time(),
                    }
                )
                + "\n"
            )
            self.log.flush()
            yield json.dumps(
                {
                    "key": ctx.get_current_key(),
                    "subtask": self.subtask,
                    "attempt": self.attempt,
                    "count": sum(state.values()),
                    "ids": sorted(state),
                    "multi": {str(k): v for k, v in sorted(state.items()) if v != 1},
                },
                sort_keys=True,
            )

    conf = Configuration()
    settings = {
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "1",
        "restart-strategy.fixed-delay.delay": f"{cfg.restart_delay_ms} ms",
        "execution.checkpointing.storage": "filesystem",
        "execution.checkpointing.dir": Path(out, "checkpoints").as_uri(),
        # Few, small network buffers: less data in flight, so checkpoints
        # complete while the job runs, and barriers meet real backlogs.
        "taskmanager.network.memory.buffers-per-channel": "2",
        "taskmanager.network.memory.floating-buffers-per-gate": "2",
        "taskmanager.memory.segment-size": "4kb",
        # The counter runs in slots of its own (slot sharing group "count"), so
        # each slot's Python worker serves one task.  With the source's and the
        # counter's tasks sharing a slot, and so a Python environment, PyFlink 2.3
        # can kill the TaskManager when a failed task is cancelled ("FATAL -
        # exception in exception handler ... Reference count must not be
        # negative"), and the job then never restarts.
        "taskmanager.numberOfTaskSlots": str(2 * cfg.parallelism),
        # Small Python bundles: the Python operators hand records back quickly.
        "python.fn-execution.bundle.size": "100",
        "python.fn-execution.bundle.time": "50",
    }
    for k, v in settings.items():
        conf.set_string(k, v)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_python_executable(sys.executable)
    env.add_python_file(str(HERE / "workload.py"))
    env.set_parallelism(cfg.parallelism)
    mode = (
        CheckpointingMode.AT_LEAST_ONCE
        if cfg.mode == "at-least-once"
        else CheckpointingMode.EXACTLY_ONCE
    )
    env.enable_checkpointing(cfg.checkpoint_ms, mode)
    if cfg.mode == "unaligned":
        env.get_checkpoint_config().enable_unaligned_checkpoints()

    source = env.from_source(
        NumberSequenceSource(1, cfg.records), WatermarkStrategy.no_watermarks(), "numbers"
    )
    tagged = source.map(Tag(), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])).name("tag")
    counted = (
        tagged.key_by(lambda v: v[0], key_type=Types.STRING())
        .process(Count(), output_type=Types.STRING())
        .name("count")
        .slot_sharing_group("count")
    )
    sink = (
        FileSink.for_row_format(Path(out, "sink").as_uri(), Encoder.simple_string_encoder())
        .with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy())
        .build()
    )
    counted.sink_to(sink).name("final-state")
    return env


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: job.py CONFIG.json\n")
        return 5
    cfg = JobConfig.from_json(Path(argv[1]).read_text(encoding="utf-8"))
    started = time.time()
    report: dict[str, object] = {"status": "failed", "error": None}
    try:
        import pyflink.version

        report["pyflink"] = pyflink.version.__version__
        env = build(cfg)
        result = env.execute(f"redletter-keyed-count-{cfg.mode}-run{cfg.run}")
        report["status"] = "finished"
        report["job_id"] = str(result.get_job_id())
    except Exception as exc:  # the job's own failure is a result to report, not a crash
        report["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:2000]
        report["traceback"] = traceback.format_exc()[-8000:]
    report["seconds"] = round(time.time() - started, 3)
    Path(cfg.out, "job.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if report["status"] == "finished" else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv))
