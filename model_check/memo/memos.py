"""``Memos``: everything a search remembers about the worlds it runs, in one object.

The search engine that runs the worlds makes it and hands it to every world it builds or
restores (``World(config, memos)``, ``World.restore(snap, config, memos)``); the world calls
through it (``memos is None``: run everything). Nothing else holds it (a Spark worker keeps
its run's beside the run's ``Checks``: ``spark.tasks._Run``): when the search ends and drops
it, what it remembered goes with it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from model_check.coverage import Coverage
from model_check.memo.codec import CodecMemo
from model_check.memo.digests import Digests
from model_check.memo.facts import FactsMemo
from model_check.memo.renames import RenameMemo
from model_check.memo.steps import StepMemo
from model_check.memo.templates import Templates
from model_check.memo.token import code_token
from model_check.memo.views import ViewMemo
from model_check.world.config import WorldConfig


@dataclass(eq=False)
class Memos:
    """The memos of the worlds of ``config`` under the code loaded when it was made.

    * ``codec``: the encodings of the worlds' values and the values of the encodings
      (``World.codec``), and what is derived from a snapshot by a pure function (its parts
      decoded: ``Codec.derived``);
    * ``digests``: the content digests of the component snapshots (the search's
      fingerprints, and the content keys of the memos below);
    * ``steps``: the cores' steps, the ZooKeeper calls, the channel operations;
    * ``facts``: the components' facts (``World.controller_facts``/``broker_facts``);
    * ``templates``: what ``World.restore`` copies, the shared components
      (``World.canonical``);
    * ``views``: the parts of the global view (``global_view``);
    * ``renames``: the renaming work of symmetry reduction (``symmetry.canonicalizer``);
    * ``token``: the code they answer for (``token.code_token``): a memo made before a
      patch of the cores (a mutant) must not serve the patched code;
    * ``coverage``: what the worlds' steps count into (None: nothing is counted).

    A search gives the memos only to worlds of ``config`` (an equal config: a Spark task
    unpickles its own copy)."""

    config: WorldConfig
    coverage: Coverage | None = None
    codec: CodecMemo = field(init=False, repr=False)
    digests: Digests = field(init=False, repr=False)
    steps: StepMemo = field(init=False, repr=False)
    facts: FactsMemo = field(init=False, repr=False)
    templates: Templates = field(init=False, repr=False)
    views: ViewMemo = field(init=False, repr=False)
    renames: RenameMemo = field(init=False, repr=False)
    token: tuple = field(init=False, repr=False)
    keepalive: list = field(init=False, repr=False)
    """The objects ``token`` names, alive while the memos are."""

    def __post_init__(self) -> None:
        self.codec = codec = CodecMemo()
        self.digests = digests = Digests()
        self.steps = StepMemo(codec, digests)
        self.facts = FactsMemo(digests)
        self.templates = Templates(self.config, codec)
        self.views = ViewMemo(digests)
        self.renames = RenameMemo(codec, digests)
        self.token, self.keepalive = code_token()

    def current(self) -> bool:
        """Whether the code loaded now is the code these memos answer for."""
        return code_token()[0] == self.token

    def counting(self, coverage: Coverage | None) -> Memos:
        """The same memos, the steps counted into ``coverage`` (a task of a run whose memos
        outlive it counts into its own)."""
        if coverage is self.coverage:
            return self
        out = copy.copy(self)
        out.coverage = coverage
        return out
