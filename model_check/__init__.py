"""The model checker: explores interleavings of the real ``fsm`` objects against ``invariants``."""
