"""The KRaft checker: a world of quorum controllers on an in-memory metadata log, KRaft
brokers, channels and abstract time, explored breadth-first with the invariants of
``invariants/kraft``. The cores are the real ones (``fsm/kraft``), driven through their
drivers, as the live processes will drive them."""
