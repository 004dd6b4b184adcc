"""The environments as training grounds: Gymnasium environments, reward, SFT export, expert data, splits.

Importing this package registers netarena/K8s-v0, netarena/Route-v0 and netarena/Malt-v0 with
Gymnasium when it is installed (`pip install pytest-netarena[train]`); without it, the export,
generate and split parts still work.
"""

from __future__ import annotations

from .registration import ENV_IDS, register_envs

try:
    register_envs()
except ImportError:  # gymnasium is not installed: nothing to register
    pass

__all__ = ["ENV_IDS", "register_envs"]
