"""The fault campaign (``kcontrol chaos``): real broker processes and a real ZooKeeper
ensemble, a seeded workload of admin actions interleaved with real faults, and after every
fault a bounded wait for recovery and the live audit.

Modules: ``plan`` (fault kinds, admin actions, the seeded plan), ``sessions`` (ending a
ZooKeeper session on the server side), ``workload`` (the admin actions and what they must
lead to), ``observe`` (reads, convergence, the audit with every broker's metadata over the
wire), ``runner`` (``Campaign``: the steps, the faults, the clean-up), ``report`` (figures,
tables, the ``--json`` file). The scaffolding it shares with the KRaft campaign (the step
loop, the time bounds, the operations followed, signals and clean-up) is ``adapters.campaign``.
"""

from adapters.chaos.plan import Action, ActionKind, Fault, FaultKind, Step, make_plan
from adapters.chaos.report import Report
from adapters.chaos.runner import Campaign, CampaignError, Settings, run_campaign

__all__ = ["Action", "ActionKind", "Campaign", "CampaignError", "Fault", "FaultKind", "Report",
           "Settings", "Step", "make_plan", "run_campaign"]
