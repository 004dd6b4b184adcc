"""A Harbor environment provider without Docker: `harbor run -e pytest_netarena.harbor.provider:NetarenaEnvironment`.

Each trial's environment is a `runtime.Runtime`: our exported tasks with their episode service in the harness, k3s
tasks on a fresh embedded cluster, every command in a sealed box; it declares no internet (no box has a route out).
Harbor (Python >= 3.12) is imported only when Harbor asks for the class, so this module imports on Python 3.11 and the
plugin never imports it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

_CLASS: Any = None


def __getattr__(name: str) -> Any:
    if name == "NetarenaEnvironment":
        return environment_class()
    raise AttributeError(name)


def environment_class() -> Any:
    """The provider's class (a harbor.environments.base.BaseEnvironment), made once Harbor is importable."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _make_class()
    return _CLASS


def _make_class() -> Any:
    import anyio
    from harbor.environments.base import BaseEnvironment, ExecResult
    from harbor.environments.capabilities import EnvironmentCapabilities

    from .runtime import DefinitionError, Runtime, kind_of

    class NetarenaEnvironment(BaseEnvironment):
        """Our sealed boxes and embedded cluster as a Harbor environment (no Docker, no internet)."""

        _runtime: Runtime | None = None

        @staticmethod
        def type() -> str:
            return "netarena"

        @property
        def capabilities(self) -> EnvironmentCapabilities:
            # the exported tasks' sidecar (its collect hook and artifact) is served by the harness
            return EnvironmentCapabilities(disable_internet=True, docker_compose=True)

        def _validate_definition(self) -> None:
            if not Path(self.environment_dir).is_dir():
                raise FileNotFoundError(f"{self.environment_dir} is not a folder")
            kind_of(Path(self.environment_dir))

        def _rt(self) -> Runtime:
            if self._runtime is None:
                raise RuntimeError("the environment is not started")
            return self._runtime

        async def start(self, force_build: bool) -> None:
            runtime = Runtime(Path(self.environment_dir), self.session_id)
            try:
                await anyio.to_thread.run_sync(runtime.start)
            except BaseException:
                runtime.close()
                raise
            self._runtime = runtime

        async def stop(self, delete: bool) -> None:
            if self._runtime is not None:
                runtime, self._runtime = self._runtime, None
                await anyio.to_thread.run_sync(runtime.stop)

        async def upload_file(self, source_path: Path | str, target_path: str) -> None:
            target = self._rt().host_path(target_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source_path, target)

        async def upload_dir(self, source_dir: Path | str, target_dir: str) -> None:
            shutil.copytree(source_dir, self._rt().host_path(target_dir), dirs_exist_ok=True, symlinks=True)

        async def download_file(self, source_path: str, target_path: Path | str) -> None:
            Path(target_path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self._rt().host_path(source_path), target_path)

        async def download_dir(self, source_dir: str, target_dir: Path | str) -> None:
            source = self._rt().host_path(source_dir)
            if source.is_dir():
                shutil.copytree(source, target_dir, dirs_exist_ok=True, symlinks=True)

        async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                       timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:
            merged = self._merge_env(env) or {}
            done = await anyio.to_thread.run_sync(self._rt().exec, command, cwd, merged, timeout_sec)
            return ExecResult(stdout=done.stdout, stderr="", return_code=done.returncode)

        async def service_exec(self, command: str, *, service: str | None = None, cwd: str | None = None,
                               env: dict[str, str] | None = None, timeout_sec: int | None = None,
                               user: str | int | None = None) -> ExecResult:
            if self.is_main_service(service):
                return await self.exec(command, cwd=cwd, env=env, timeout_sec=timeout_sec, user=user)
            done = await anyio.to_thread.run_sync(self._rt().service_exec, command)
            return ExecResult(stdout=done.stdout, stderr="", return_code=done.returncode)

        async def service_download_dir(self, source_dir: str, target_dir: Path | str, *,
                                       service: str | None = None) -> None:
            if self.is_main_service(service):
                await self.download_dir(source_dir, target_dir)
                return
            source = self._rt().service_path(source_dir)
            if source.is_dir():
                shutil.copytree(source, target_dir, dirs_exist_ok=True)

        async def service_download_file(self, source_path: str, target_path: Path | str, *,
                                        service: str | None = None) -> None:
            if self.is_main_service(service):
                await self.download_file(source_path, target_path)
                return
            raise DefinitionError("the netarena service offers its verdict folder only")

        async def service_is_dir(self, path: str, *, service: str | None = None, user: Any = None) -> bool:
            if self.is_main_service(service):
                return await self.is_dir(path, user=user)
            try:
                return self._rt().service_path(path).is_dir()
            except DefinitionError:
                return False

        async def stop_service(self, service: str) -> None:
            return None  # each command's box ended with it: nothing of the agent is left running

    return NetarenaEnvironment
