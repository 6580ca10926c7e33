"""What the two fault campaigns share: the ZooKeeper campaign (``adapters.chaos``) and the
KRaft campaign (``adapters.kraft_chaos``) run the same scaffolding around different clusters.

Modules:

- ``settings``: ``CampaignSettings`` (what both are given, and the settle, operation and
  campaign time limits derived from it);
- ``timing``: ``time_recovery`` (the recovery clock of a fault) and ``hold_pause`` (a pause
  held until it did what it must);
- ``operations``: ``Operation`` (an admin action followed until done) and what becomes of
  the overdue ones;
- ``steps``: ``StepLog``, the runner's step loop and bookkeeping (narration, time limit,
  drain, the report's rows of one step, the progress line);
- ``finish``: ``run_to_end``, a campaign run to its end whatever happens (signals, clean-up,
  the report printed and written).

Nothing here imports either campaign: each imports this package.
"""
