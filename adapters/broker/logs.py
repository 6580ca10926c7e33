"""Logging off the hot path of a broker process (``kcontrol broker``).

A controller that moves 10,000 leaderships writes one state-change line per partition and
replica: 20,000-30,000 lines for one event. Formatted and written on the controller's event
thread they cost about half a second before the controller sends its requests and answers a
ControlledShutdown (measured: ``docs/benchmarks.md``). Kafka writes the same lines through
log4j's own appender threads.

``defer_logging()`` moves formatting and writing to writer threads: the handlers of the root
logger, and of every other logger that has handlers of its own (the state-change loggers,
which write ``state-change.log``), are replaced by a ``QueueHandler`` whose records keep their
arguments unformatted (every logger in kcontrol passes immutable values or strings), and a
``QueueListener`` per logger hands them, in order, to the handlers that were there. The
calling thread only builds the record and queues it. ``stop()`` (also run at exit) writes whatever is still queued. What a kill -9
finds still queued is lost; the listener thread writes as soon as it gets the GIL, so that
is at most the last lines of a burst.
"""

from __future__ import annotations

import atexit
import logging
import logging.handlers
import queue


class _Deferred(logging.handlers.QueueHandler):
    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        if record.exc_info and not record.exc_text:  # tracebacks cannot wait: frames die
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        return record


class DeferredLogging:
    def __init__(self, root: logging.Logger) -> None:
        self.root = root
        self.handlers = list(root.handlers)
        self.queue: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
        self.listener = logging.handlers.QueueListener(self.queue, *self.handlers,
                                                       respect_handler_level=True)
        self.handler = _Deferred(self.queue)

    def start(self) -> DeferredLogging:
        for h in self.handlers:
            self.root.removeHandler(h)
        self.root.addHandler(self.handler)
        self.listener.start()
        atexit.register(self.stop)
        return self

    def stop(self) -> None:
        """Write what is queued, then log directly again (idempotent)."""
        if self.handler not in self.root.handlers:
            return
        self.root.removeHandler(self.handler)
        self.listener.stop()
        for h in self.handlers:
            self.root.addHandler(h)


def defer_logging() -> list[DeferredLogging]:
    """Route the root logger, and every logger with handlers of its own, through a writer
    thread each (call after configuring them); ``stop`` each at the end."""
    manager = logging.Logger.manager
    loggers = [logging.getLogger()] + [
        lg for _, lg in sorted(manager.loggerDict.items())
        if isinstance(lg, logging.Logger) and lg.handlers]
    return [DeferredLogging(lg).start() for lg in loggers]
