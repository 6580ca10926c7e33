"""The controller: one object holding all cluster state, deciding and performing every
transition (see ``controller.py`` for the module map)."""

from fsm.controller.config import ControllerConfig
from fsm.controller.context import ControllerContext
from fsm.controller.controller import Controller
from fsm.controller.records import Decision, Entities, Round, StateChange

__all__ = ["Controller", "ControllerConfig", "ControllerContext", "Decision", "Entities", "Round",
           "StateChange"]
