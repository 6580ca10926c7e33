"""Adapters: bind the pure core (``fsm``) to real ZooKeeper, sockets and the command line."""
