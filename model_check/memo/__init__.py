"""The model checker's memos, in one object the search owns: ``Memos``.

A search runs the same cores' steps, ZooKeeper calls and channel operations, asks the same
questions of the same components, encodes and restores the same snapshots and renames the
same components over and over; the memos remember the answers (``codec``, ``steps``,
``facts``, ``templates``, ``views``, ``renames``) and never change one. The search engine makes a
``Memos`` for its config and passes it to the worlds it runs; a world without one runs
everything (a replay, a test driving a world by hand).
"""

from model_check.memo.memos import Memos

__all__ = ["Memos"]
