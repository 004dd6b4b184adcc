"""The route environment under --compat netarena: its injection, pingmesh text, log observations, step rules and verdicts."""

from __future__ import annotations

import time

from ....core.app import NETARENA
from ....core.tools import Tool
from ....core.types import Judgement, Query, StepOutcome
from ....core.errors import InfraError
from . import grade, rules as compat
from ..replies import Refusal
from ..environment import RouteEnvironment
from ..network.mesh import ICMP_ONLY


class NetArenaRouteEnvironment(RouteEnvironment):
    """Same network, boxes and prober as ours (probing ICMP only, as its ping does); injection, observations and
    verdicts are NetArena's, and safety is judged only at its measurements (no watch during a command).

    The loss is measured before every agent turn (after reset, then after each command but the
    last of the budget, which NetArena never measures). A turn that follows a 0 % measurement is not
    run: NetArena ends the episode there, a success, having called the agent once more. So a fault
    that broke nothing succeeds at the first turn, and on success the number of steps is NetArena's
    `iterations` (on failure NetArena reports the budget + 1).
    """

    default_max_steps = compat.MAX_ITERATIONS
    rules = NETARENA
    protocols = ICMP_ONLY  #: NetArena's pingmesh is `ping`: a pair reachable by ICMP is reachable

    def tools(self) -> tuple[Tool, ...]:
        return ()  # NetArena's text protocol: no tools are offered

    def reset(self, query: Query) -> str:
        topo = self._start(query)
        assert self.network is not None and self.prober is not None
        self.max_iterations = self.options.max_steps or self.default_max_steps
        self.injected = []
        for command in compat.injection_plan(query.params["faults"], topo):  # failures ignored, as NetArena's
            self.network.run(topo.router, list(command.argv))
            self.injected.append(command.text)
        self.log = ""
        self.turns = 0
        self.safety = grade.Safety()
        self.success = False
        self.loss = 100
        self._measure()
        return f"Network topology:\n{topo.describe()}\n\n{compat.observation(self.log, self.pingall)}"

    def _measure(self) -> bool:
        """One of NetArena's pre-turn measurements; True when the loss rose since the previous one."""
        assert self.prober is not None and self.network is not None
        previous = self.mesh.reachable if self.mesh is not None else None
        self.mesh = self.prober.measure(previous=previous)
        self.pingall, loss = compat.render_pingall(self.network.topology.nodes, self.mesh.reachable)
        self.previous_loss, self.loss = self.loss, loss
        rose = self.safety.check(loss)
        self.success = loss == 0
        self._shown = time.perf_counter()
        return rose

    def _step(self, reply: str) -> StepOutcome:
        if self.network is None or self.prober is None or self.mesh is None:
            raise InfraError("step() before a successful reset()")
        if self.success:
            note = "not run: the pingall before this turn showed 0% loss, which ends a NetArena episode"
            return StepOutcome("", note, note, done=True)
        elapsed = time.perf_counter() - self._shown
        topo = self.topology
        self.turns += 1
        machine, command, action_text = "", "", ""
        try:
            action = self.reader().read(reply, last=self.options.prompt_style == "cot")
            machine, command, action_text = action.machine, action.command, action.text
        except Refusal:
            pass  # NetArena skips a turn it cannot use without telling the agent
        self.log += compat.log_entry(self.pingall, machine, command, self.loss, elapsed)
        output, refused = "", True
        if machine in topo.nodes and command.strip() and not compat.denied(command):
            result, storms, accounting_s = self.run_accounted(machine, command)
            output, refused = result.output + "".join(f"\n[{storm}]" for storm in storms), False
            self.log += compat.command_output_entry(output)
        else:
            storms, accounting_s = (), 0.0
        if self.ended:
            return StepOutcome(action_text, output, self.ended, storms, refused=refused, done=True, check_s=accounting_s)
        if self.turns >= self.max_iterations:  # the last command of the budget is never measured
            return StepOutcome(action_text, output, self.log[-compat.CONTEXT_CHARS:], storms, refused=refused,
                               check_s=accounting_s)
        started = time.perf_counter()
        rose = self._measure()
        storms += self.stop_storm()  # a storm the pingall's own packets set off
        violations = (*storms, *((f"the overall loss rose from {self.previous_loss}% to {self.loss}%",) if rose else ()))
        return StepOutcome(action_text, output, compat.observation(self.log, self.pingall), violations,
                           refused=refused, done=bool(self.ended), check_s=time.perf_counter() - started + accounting_s)

    def reader(self):
        from ..replies import Reader

        topo = self.topology
        return Reader(topo.nodes, topo.router, topo.prefix, join=False)  # NetArena runs one command per turn

    def _judge(self) -> Judgement:
        """NetArena's success: some pre-turn measurement showed 0 % loss (never a measurement of our own)."""
        if self.ended:
            return Judgement(False, self.ended)
        if self.mesh is None:
            raise InfraError("judge() before a successful reset()")
        if self.success:
            return Judgement(True, "a pingall before a turn showed 0% loss")
        return Judgement(False, f"the last measured pingall showed {self.loss}% loss")
