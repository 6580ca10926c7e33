"""The KRaft invariants: ``CATALOGUE`` over ``KRaftView`` (pure; imports ``fsm`` only)."""

from invariants.kraft.catalogue import CATALOGUE
from invariants.kraft.view import BrokerFacts, ControllerFacts, KRaftView

__all__ = ["CATALOGUE", "BrokerFacts", "ControllerFacts", "KRaftView"]
