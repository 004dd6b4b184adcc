"""The exceptions pytest-netarena raises, split by who is to blame: the user, the agent or the infrastructure."""

from __future__ import annotations


class NetArenaError(Exception):
    """Root of every error raised by pytest-netarena."""


class UsageError(NetArenaError, ValueError):
    """A bad option, agent spec or input file given by the user."""


class BackendUnavailable(NetArenaError):
    """An environment cannot run on this machine (no root, no Mininet, ...); its episodes skip."""


class InfraError(NetArenaError):
    """The environment or a model endpoint broke; never counted against the agent."""


class NothingToExport(NetArenaError):
    """No episode of the runs matches an export's selection: nothing was written (an earlier export stays)."""


class AgentError(NetArenaError):
    """The agent failed to produce a usable reply (exception, timeout, garbage after retries)."""


def raised_at(error: BaseException) -> str:
    """Where an unexpected error came from, for an infrastructure message: 'file.py:line in function'."""
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "unknown place"
    innermost = frames[-1]
    return f"{innermost.filename.rsplit('/', 1)[-1]}:{innermost.lineno} in {innermost.name}"
