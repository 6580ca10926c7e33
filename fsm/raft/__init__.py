"""The metadata quorum's Raft (KIP-595), pure: roles as a declared table (``roles``), the
messages voters and observers exchange (``messages``), the events a node hears and the effects
it asks its shell for (``events``, ``effects``), its configuration (``config``) and what it
knows of its own log (``log_summary``). The log's contents live in the shell -- on disk
(``adapters.raft_log``) or in the checker's world -- never in the core: the core sees batches
only as (base offset, epoch, number of records).

The core is ``core.RaftNode`` (its logic in small modules named for what they hold, its
mutation points in its docstring); ``driver.RaftDriver`` carries its effects out through a
``RaftPort``."""
