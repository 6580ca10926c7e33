"""What a kcontrol process asks of its host, for brokers and controllers alike: real-time
scheduling for the control plane's threads (``thread_priority``, KIP-291's operating-system
half) and a garbage collector tuned for bursts (``gc_tuning``). Standard library only: the
network layer imports it without pulling in kazoo or the controller service."""
