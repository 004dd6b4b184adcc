"""The kubelet's probes: startup, liveness and readiness, run on their schedule, their verdicts applied.

A part of the kubelet (kubelet.py), as its probe workers are: each probe loops on the cluster's event
loop, runs its check (exec in a box of the container; httpGet, tcpSocket, grpc from the node's address,
probes.py) and posts what it found to the kubelet's thread, which applies it: Unhealthy events, Ready
following readiness, a container killed and restarted when liveness or startup fails.
"""

from __future__ import annotations

import asyncio

from . import probes
from .pods import ContainerRun, PodRun
from .processes import ExecSession

PROBE_KINDS = (("startup", "startupProbe"), ("liveness", "livenessProbe"), ("readiness", "readinessProbe"))


class Probing:
    """The probe half of the Kubelet (mixed into it: it uses its post, events, boxes and status writes)."""

    async def _probe_loop(self, run: PodRun, container: ContainerRun, generation: int, kind: str, probe: dict) -> None:
        period = float(probe.get("periodSeconds") or 10)
        need_ok = int(probe.get("successThreshold") or 1)
        need_bad = int(probe.get("failureThreshold") or 3)
        await asyncio.sleep(float(probe.get("initialDelaySeconds") or 0))
        good = bad = 0
        while not run.stopping and generation == container.generation and container.state == "running":
            if kind != "startup" and not container.started:
                await asyncio.sleep(min(period, 1.0))
                continue
            if kind == "startup" and container.started:
                return
            ok, why = await self._attempt(run, container, probe)
            good, bad = (good + 1, 0) if ok else (0, bad + 1)
            if not ok:
                self.post(lambda why=why: self._unhealthy(run, container, generation, kind, why))
            if (ok and good >= need_ok) or (not ok and bad >= need_bad):
                self.post(lambda ok=ok: self._verdict(run, container, generation, kind, ok))
                if kind in ("startup", "liveness") and not ok:
                    return  # the container is killed: the next run has a probe loop of its own
            await asyncio.sleep(period)

    async def _attempt(self, run: PodRun, container: ContainerRun, probe: dict) -> tuple[bool, str]:
        if "exec" in probe:
            argv = tuple((probe.get("exec") or {}).get("command") or ())
            code, output = await asyncio.get_running_loop().run_in_executor(
                None, self._exec_probe, run, container, argv, probes.timeout_of(probe))
            return code == 0, output.strip() or (f"command {list(argv)} exited with {code}" if code is not None
                                                  else f"command timed out after {probes.timeout_of(probe):g}s")
        return await probes.network(self.network.node, run.network.address, container.spec, probe, self.nameserver)

    def _exec_probe(self, run: PodRun, container: ContainerRun, argv: tuple[str, ...], timeout: float):
        if not argv:
            return 1, "no command"
        output: list[bytes] = []
        session = ExecSession(self._box(run, container), argv, self.container_groups(run, container), False, timeout,
                              64 * 1024)
        code = session.run(lambda channel, data: output.append(data), None)
        return code, b"".join(output).decode(errors="replace")[:1024]

    def _unhealthy(self, run: PodRun, container: ContainerRun, generation: int, kind: str, why: str) -> None:
        if run.stopping or generation != container.generation:
            return
        self.events.pod(run.pod, "Unhealthy", f"{kind.capitalize()} probe failed: {why}", warning=True,
                        container=container.field_path)

    def _verdict(self, run: PodRun, container: ContainerRun, generation: int, kind: str, ok: bool) -> None:
        if run.stopping or generation != container.generation or container.state != "running":
            return
        if kind == "readiness":
            container.ready = ok
        elif kind == "startup" and ok:
            container.started = True
            container.ready = not container.spec.get("readinessProbe")
        elif not ok:  # a failed liveness or startup probe: the container is killed and restarted
            self.events.pod(run.pod, "Killing", f"Container {container.name} failed {kind} probe, will be restarted",
                            container=container.field_path)
            self._stop_runner(container)
            container.terminated(137, "Error")
            self._ended(run, container, generation, 137, started=False)
            return
        self._write_status(run)
