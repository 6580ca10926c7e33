"""Errors of the ensemble launcher: each message says what to do."""

from __future__ import annotations


class EnsembleError(Exception):
    """The ensemble could not do what was asked; the message says what to do about it."""


class JavaNotFoundError(EnsembleError):
    pass


class JarsNotFoundError(EnsembleError):
    pass


class PortInUseError(EnsembleError):
    pass


class AlreadyRunningError(EnsembleError):
    pass


class NoEnsembleError(EnsembleError):
    pass


class QuorumError(EnsembleError):
    """No quorum formed in time, or a server exited while waiting for one."""
