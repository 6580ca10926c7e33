"""The pure core of kcontrol: transition tables, the controller object, the broker core.

Nothing here does I/O: no sockets, no kazoo, no threads, no clocks, no
randomness. Events come in as values and effects go out as values, so the
model checker and the live cluster run exactly this code.
"""

from fsm.transition_table import IllegalTransition, TransitionTable

__all__ = ["IllegalTransition", "TransitionTable"]
