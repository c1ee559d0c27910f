"""The torch mechanics shared by algorithms: GAE, advantage normalisation, gradient clipping, the optimizer step."""

import math

import numpy as np
import torch
import torch.nn as nn

from skrl_like.torch.agents.mechanics import (
    clip_gradients,
    compute_gae,
    normalize_advantages,
    optimizer_step,
    parameters_finite,
    unique_parameters,
)

# -- GAE and advantages ------------------------------------------------------------------------------------------------------


def test_gae_on_a_hand_computed_case_with_termination_and_truncation():
    # gamma = lambda = 0.5. env 0 terminates at t=1; env 1 is truncated at t=0.
    rewards = torch.tensor([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]).unsqueeze(-1)
    values = torch.tensor([[0.5, 0.0], [1.0, 0.0], [1.5, 0.0]]).unsqueeze(-1)
    dones = torch.tensor([[False, True], [True, False], [False, False]]).unsqueeze(-1)
    next_values = torch.tensor([[2.0], [1.0]])
    returns, advantages = compute_gae(rewards, dones, values, next_values, discount_factor=0.5, lambda_coefficient=0.5)
    # env 0: A2 = 3 - 1.5 + 0.5 * 2.0 = 2.5; A1 = 2 - 1.0 (episode ends) = 1.0; A0 = 1 - 0.5 + 0.5 * (1.0 + 0.5 * 1.0) = 1.25
    # env 1: A2 = 1 + 0.5 * 1.0 = 1.5; A1 = 1 + 0.5 * (0 + 0.5 * 1.5) = 1.375; A0 = 1 (episode ends)
    raw = np.array([[1.25, 1.0], [1.0, 1.375], [2.5, 1.5]])
    np.testing.assert_allclose(returns.squeeze(-1).numpy(), raw + values.squeeze(-1).numpy(), rtol=1e-6)
    normalised = (raw - raw.mean()) / (raw.std(ddof=1) + 1e-8)
    np.testing.assert_allclose(advantages.squeeze(-1).numpy(), normalised, rtol=1e-5)


def test_a_single_advantage_normalises_to_zero_not_nan():
    assert normalize_advantages(torch.tensor([[[3.5]]])).item() == 0.0
    normalised = normalize_advantages(torch.tensor([1.0, 3.0]))
    torch.testing.assert_close(normalised, torch.tensor([-1.0, 1.0]) / (math.sqrt(2.0) + 1e-8))


# -- gradients and the optimizer step -------------------------------------------------------------------------


def test_gradient_clipping_matches_torch_clip_grad_norm():
    torch.manual_seed(0)
    reference, ours = nn.Linear(3, 4), nn.Linear(3, 4)
    reference(torch.randn(5, 3)).pow(2).sum().mul(100).backward()  # a gradient far above the limit
    for p, q in zip(reference.parameters(), ours.parameters()):
        q.grad = p.grad.clone()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
    clip_gradients(list(ours.parameters()), 0.5)
    for p, q in zip(reference.parameters(), ours.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    assert torch.linalg.vector_norm(torch.cat([q.grad.view(-1) for q in ours.parameters()])) <= 0.5 + 1e-5


def test_optimizer_step_clips_then_steps_like_the_plain_torch_sequence():
    torch.manual_seed(0)
    reference, ours = nn.Linear(3, 2), nn.Linear(3, 2)
    ours.load_state_dict(reference.state_dict())
    inputs = torch.randn(8, 3) * 10
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    reference(inputs).pow(2).sum().backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
    reference_optimizer.step()

    optimizer = torch.optim.SGD(ours.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device="cpu", enabled=False)
    optimizer_step(ours(inputs).pow(2).sum(), optimizer, list(ours.parameters()), 0.5, scaler)
    for expected, actual in zip(reference.parameters(), ours.parameters()):
        torch.testing.assert_close(actual, expected)


def test_a_shared_model_counts_its_parameters_once():
    shared, other = nn.Linear(2, 2), nn.Linear(2, 1)
    assert len(unique_parameters(shared, shared)) == 2
    assert len(unique_parameters(shared, other)) == 4


def test_parameters_finite_flags_nan_and_inf():
    layer = nn.Linear(2, 2)
    assert bool(parameters_finite(list(layer.parameters())))
    with torch.no_grad():
        layer.bias[1] = math.inf
    assert not bool(parameters_finite(list(layer.parameters())))


def test_scoring_only_differentiates_toward_the_inputs_and_restores_each_flag():
    from skrl_like.torch.agents.off_policy import scoring_only

    critic = nn.Linear(3, 1)
    critic.bias.requires_grad_(False)  # a user's own choice, kept
    actions = torch.ones(2, 3, requires_grad=True)
    with scoring_only(list(critic.parameters())):
        value = critic(actions).sum()
    value.backward()
    assert critic.weight.grad is None and critic.bias.grad is None
    torch.testing.assert_close(actions.grad, critic.weight.detach().expand(2, 3))
    assert critic.weight.requires_grad and not critic.bias.requires_grad
