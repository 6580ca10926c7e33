"""The Raft checker (issue 24): the metadata quorum's voters -- real ``RaftNode``s driven by
the real driver -- on a network that loses, duplicates and reorders, disks that crash between
append and fsync, and a state machine on top (``world``); its view for the invariants
(``view``, ``invariants.raft``), scenarios (``scenario``), mutants and coverage."""
