"""Trust Region Policy Optimization (TRPO), torch backend.

Schulman et al., "Trust Region Policy Optimization", 2015. The update follows skrl 1.4.3: the rollout with
log pi_old(a|s), values and GAE (the on-policy half, :class:`~skrl_like.torch.agents.on_policy.OnPolicyAgent`), then
one natural-gradient step of the policy on the whole rollout (conjugate gradient on Fisher-vector products, a
backtracking line search under the KL constraint) and ``learning_epochs`` passes of ``mini_batches`` contiguous
mini-batches fitting the value function with its own Adam. Two fixes to skrl 1.4.3 (docs/agents/trpo.md): the KL is
the Gaussian KL (skrl's log-sigma term has the wrong sign), and the line search expects ``fraction * g . step`` of
improvement at each trial (skrl multiplies the fractions cumulatively).
"""

from typing import Any, Callable, List, NamedTuple, Tuple

import torch
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector

from skrl_like.core.agents import trpo as neutral
from skrl_like.core.agents.checks import check_named_flags, check_rollout_memory, non_finite_note, step_flag_names
from skrl_like.core.agents.schedule import mini_batch_slices
from skrl_like.core.agents.trpo import IGNORED_KEYS, check_trpo_models
from skrl_like.torch.agents.mechanics import optimizer_step, parameters_finite, step_scheduler
from skrl_like.torch.agents.on_policy import OnPolicyAgent
from skrl_like.torch.models import GaussianMixin
from skrl_like.torch.utils.distributed import mean_over_processes

TRPO_DEFAULT_CONFIG = neutral.TRPO_DEFAULT_CONFIG  # torch adds no keys (no mixed_precision, as in skrl)

# the tolerance on r . r at which conjugate gradient stops (skrl's)
RESIDUAL_TOLERANCE = 1e-10


def gaussian_kl(
    mean_1: torch.Tensor, log_std_1: torch.Tensor, mean_2: torch.Tensor, log_std_2: torch.Tensor
) -> torch.Tensor:
    """KL(N(mean_1, std_1) || N(mean_2, std_2)) of diagonal Gaussians: summed over the action dimensions, averaged
    over the rows."""
    kl = (
        log_std_2
        - log_std_1
        + (torch.exp(2 * log_std_1) + torch.square(mean_1 - mean_2)) / (2 * torch.exp(2 * log_std_2))
        - 0.5
    )
    return kl.sum(dim=-1).mean()


def conjugate_gradient(
    matrix_vector_product: Callable[[torch.Tensor], torch.Tensor],
    b: torch.Tensor,
    iterations: int,
    tolerance: float = RESIDUAL_TOLERANCE,
) -> torch.Tensor:
    """Approximately solve ``A x = b`` for a symmetric positive-definite ``A`` given as ``v -> A v``: at most
    ``iterations`` steps from ``x = 0``, stopping once the squared residual is below ``tolerance``.

    The stop is a mask rather than a ``break`` so that no step waits for the device (the same numbers)."""
    x = torch.zeros_like(b)
    residual = b.clone()
    direction = b.clone()
    residual_norm = residual @ residual
    active = torch.ones((), dtype=torch.bool, device=b.device)
    for _ in range(iterations):
        product = matrix_vector_product(direction)
        alpha = torch.where(active, residual_norm / (direction @ product), 0.0)
        x = x + alpha * direction
        residual = residual - alpha * product
        new_residual_norm = residual @ residual
        active = active & (new_residual_norm >= tolerance)
        beta = torch.where(active, new_residual_norm / residual_norm, 0.0)
        direction = torch.where(active, residual + beta * direction, direction)
        residual_norm = torch.where(active, new_residual_norm, residual_norm)
    return x


class Trial(NamedTuple):
    """What the line search learns of one trial point: the surrogate, the KL to the start and a tracked value."""

    surrogate: torch.Tensor
    kl: torch.Tensor
    stddev: torch.Tensor


def line_search(
    evaluate: Callable[[torch.Tensor], Trial],
    start: torch.Tensor,
    full_step: torch.Tensor,
    expected_improvement: torch.Tensor,
    start_trial: Trial,
    max_kl_divergence: float,
    accept_ratio: float,
    step_fraction: float,
    max_backtrack_steps: int,
) -> Tuple[torch.Tensor, bool, Trial]:
    """Backtracking line search: the first ``start + fraction * full_step``, ``fraction = step_fraction * 0.5**k``
    for ``k < max_backtrack_steps``, with a KL below ``max_kl_divergence`` and an improvement of the surrogate above
    ``accept_ratio`` of ``fraction * expected_improvement`` (skrl 1.4.3: of the product of all fractions so far);
    ``start`` when none is. Returns ``(parameters, accepted, trial at the parameters)``."""
    for trial in range(max_backtrack_steps):
        fraction = step_fraction * 0.5**trial
        candidate = start + fraction * full_step
        result = evaluate(candidate)
        ratio = (result.surrogate - start_trial.surrogate) / (fraction * expected_improvement)
        if bool((result.kl < max_kl_divergence) & (ratio > accept_ratio)):  # one host sync per trial
            return candidate, True, result
    return start, False, start_trial


class PolicyEvaluation(NamedTuple):
    """The policy on the rollout: the surrogate and the distribution's parameters."""

    surrogate: torch.Tensor  # mean(A * pi(a|s) / pi_old(a|s)), to maximise
    mean_actions: torch.Tensor
    log_std: torch.Tensor


class TRPO(OnPolicyAgent):
    """Trust Region Policy Optimization.

    :param models: ``{"policy": ..., "value": ...}``: a Gaussian policy (``GaussianMixin``: the step needs its mean
        and log standard deviation) and a separate value model (a model shared by both roles is not supported).
    :param memory: a memory of ``memory_size == cfg["rollouts"]`` and ``num_envs`` equal to the agent's
        environments, or a list of memories (the first one is used for learning).
    :param cfg: keys of ``TRPO_DEFAULT_CONFIG`` (the other parameters: :class:`~skrl_like.torch.agents.base.Agent`).
    """

    _learning_rates = {"value_learning_rate": ("value_optimizer", "scheduler")}  # the policy takes no rate
    default_config = TRPO_DEFAULT_CONFIG
    ignored_config_keys = IGNORED_KEYS

    def _setup(self) -> None:
        cfg = self.cfg
        check_trpo_models(self.models, GaussianMixin)
        self._setup_on_policy()
        if self.memory is not None:
            check_rollout_memory("TRPO", self.memory, cfg["rollouts"], cfg["mini_batches"])

        # only the value function has an optimizer: the policy moves by the natural-gradient step
        self._value_parameters = list(self.value.parameters())
        # fused: one kernel for all parameters instead of a loop of small ops (cheaper for small networks)
        self.value_optimizer = torch.optim.Adam(self._value_parameters, lr=cfg["value_learning_rate"], fused=True)
        self.checkpoint_modules["value_optimizer"] = self.value_optimizer
        scheduler = cfg["learning_rate_scheduler"]
        self.scheduler = scheduler(self.value_optimizer, **cfg["learning_rate_scheduler_kwargs"]) if scheduler else None
        self._scaler = torch.amp.GradScaler(device=self.device.type, enabled=False)  # a pass-through

    # -- the policy step ----------------------------------------------------------------------------------------

    def _evaluate_policy(self, inputs: dict, actions: torch.Tensor, old_log_prob: torch.Tensor, advantages):
        _, log_prob, outputs = self.policy.act({**inputs, "taken_actions": actions}, role="policy")
        surrogate = (advantages * torch.exp(log_prob - old_log_prob)).mean()
        return PolicyEvaluation(surrogate, outputs["mean_actions"], self.policy.get_log_std(role="policy"))

    def _policy_step(
        self, inputs: dict, actions: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """One natural-gradient step of the policy within the trust region, on the rollout's policy ``inputs``:
        ``(surrogate before the step, mean standard deviation after it)``."""
        cfg = self.cfg
        parameters = [parameter for parameter in self.policy.parameters() if parameter.requires_grad]

        def flat_grad(output: torch.Tensor, **kwargs: Any) -> torch.Tensor:
            grads = torch.autograd.grad(output, parameters, allow_unused=True, **kwargs)
            return torch.cat(
                [(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(grads, parameters)]
            )

        # in a distributed run the gradient, the curvature products and the line search's surrogate and KL are means
        # over the processes: every process takes the same step, the one for all their samples together
        start = self._evaluate_policy(inputs, actions, old_log_prob, advantages)
        old_mean, old_log_std = start.mean_actions.detach(), start.log_std.detach()
        policy_gradient = mean_over_processes(flat_grad(start.surrogate, retain_graph=True))

        # F v = d/dθ (dKL/dθ . v) + damping v, the KL's gradient graph built once for every product
        kl_gradient = flat_grad(
            gaussian_kl(old_mean, old_log_std, start.mean_actions, start.log_std), create_graph=True
        )

        def fisher_vector_product(vector: torch.Tensor) -> torch.Tensor:
            return mean_over_processes(flat_grad(kl_gradient @ vector, retain_graph=True)) + cfg["damping"] * vector

        search_direction = conjugate_gradient(fisher_vector_product, policy_gradient, cfg["conjugate_gradient_steps"])
        # the largest step along the direction whose quadratic KL model equals max_kl_divergence
        curvature = search_direction @ fisher_vector_product(search_direction)
        full_step = torch.sqrt(2 * cfg["max_kl_divergence"] / curvature) * search_direction

        start_parameters = parameters_to_vector(parameters).detach()

        def evaluate(flat: torch.Tensor) -> Trial:
            _copy_into_parameters(flat, parameters)
            evaluation = self._evaluate_policy(inputs, actions, old_log_prob, advantages)
            kl = gaussian_kl(old_mean, old_log_std, evaluation.mean_actions, evaluation.log_std)
            surrogate, kl = mean_over_processes(torch.stack([evaluation.surrogate, kl]))
            return Trial(surrogate, kl, torch.exp(evaluation.log_std).mean())

        start_surrogate = mean_over_processes(start.surrogate.detach())
        start_trial = Trial(start_surrogate, torch.zeros_like(start_surrogate), torch.exp(old_log_std).mean())
        with torch.no_grad():
            flat, _, trial = line_search(
                evaluate,
                start_parameters,
                full_step,
                policy_gradient @ full_step,
                start_trial,
                cfg["max_kl_divergence"],
                cfg["accept_ratio"],
                cfg["step_fraction"],
                cfg["max_backtrack_steps"],
            )
            _copy_into_parameters(flat, parameters)
        return start_trial.surrogate, trial.stddev

    # -- the update ---------------------------------------------------------------------------------------------

    def _update(self, timestep: int, timesteps: int) -> None:
        cfg = self.cfg
        batch = self._rollout_batch(timestep)

        # the state statistics are updated with the whole rollout, then again in the first value epoch (skrl)
        states = self._state_preprocessor(batch.states, train=True)
        inputs = self._update_inputs(states, slice(None))
        policy_loss, stddev = self._policy_step(inputs, batch.actions, batch.log_prob, batch.advantages)
        policy_flags = torch.stack([torch.isfinite(policy_loss), parameters_finite(list(self.policy.parameters()))])

        # value fitting: epochs x contiguous mini-batches with the value optimizer
        value_losses, stepped_finite = [], []
        for epoch in range(cfg["learning_epochs"]):
            for rows in mini_batch_slices(len(batch.states), cfg["mini_batches"]):
                inputs = self._update_inputs(self._state_preprocessor(batch.states[rows], train=not epoch), rows)
                predicted_values, _, _ = self.value.act(self._value_inputs(inputs, rows, epoch), role="value")
                value_loss = cfg["value_loss_scale"] * F.mse_loss(batch.returns[rows], predicted_values)
                optimizer_step(
                    value_loss,
                    self.value_optimizer,
                    self._value_parameters,
                    cfg["grad_norm_clip"],
                    self._scaler,
                )
                value_losses.append(value_loss.detach()[None])
                stepped_finite.append(parameters_finite(self._value_parameters))
            step_scheduler(self.scheduler, [])

        self._check_trpo_update(timestep, policy_flags, value_losses, stepped_finite)
        self.track_data("Loss / Policy loss", policy_loss)
        self.track_data("Loss / Value loss", torch.cat(value_losses).mean())
        self.track_data("Policy / Standard deviation", stddev)
        if self.scheduler is not None:
            self.track_data("Learning / Value learning rate", self.scheduler.get_last_lr()[0])

    _loss_terms = ("value",)

    def _check_trpo_update(self, timestep: int, policy_flags: torch.Tensor, value_losses: list, value_finite: list):
        """One host transfer: the first non-finite quantity of the policy step, then of each value step."""
        flags = torch.cat(
            [
                policy_flags,
                torch.stack([torch.isfinite(torch.cat(value_losses)), torch.stack(value_finite)], 1).reshape(-1),
            ]
        )
        flags = flags.tolist()
        if all(flags):
            return
        note = non_finite_note(self._non_finite_parameters())
        steps = [
            (index // self.cfg["mini_batches"], index % self.cfg["mini_batches"]) for index in range(len(value_losses))
        ]
        names = [
            "the policy loss (surrogate) of the policy step",
            f"the policy parameters after the line search ({note})",
            *step_flag_names(steps, note, self._loss_terms),
        ]
        check_named_flags("TRPO", timestep, names, flags)


__all__ = ["TRPO", "TRPO_DEFAULT_CONFIG", "conjugate_gradient", "gaussian_kl", "line_search"]


def _copy_into_parameters(flat: torch.Tensor, parameters: List[torch.nn.Parameter]) -> None:
    """Write the flat vector into the parameters in place (under ``no_grad``).

    ``torch.nn.utils.vector_to_parameters`` would rebind each parameter to a view of ``flat`` instead: a matrix
    product on such a view may round differently from one on the parameter's own, differently aligned storage, so
    a run restored from a checkpoint (fresh storage) drifted one float32 ulp from the uninterrupted run.
    """
    offset = 0
    for parameter in parameters:
        count = parameter.numel()
        parameter.copy_(flat[offset : offset + count].view_as(parameter))
        offset += count
