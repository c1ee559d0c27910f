"""The floor under every JAX library: the least time plain JAX needs per environment step at issue 11's shapes.

``torch_floor.py``'s twin: the same throughput protocol of ``off_policy.py`` (``THROUGHPUT_TIMESTEPS`` env steps, the
first ``learning_starts`` acting at random without updates), the same unwrapped one-env gymnasium sync vector env,
and bare JAX: MLPs as lists of ``(kernel, bias)`` arrays, one jitted act, one jitted gradient step per env step
(SAC: both critics, the policy, the entropy coefficient and the polyak update in one call; TD3: the critics every
step and the policy with the targets every ``policy_delay`` steps, one call each; DQN: one call), optax's Adam, the
replay as NumPy arrays gathered on the host. No checks, no tracking, no preprocessors, no schedules. Compilation is
included, as in ``off_policy.py`` (it is part of what a run costs).

    .venv/bin/python benchmarks/jax_floor.py --algorithm SAC --seed 0       # also TD3, DQN

Prints ONE JSON line in ``off_policy.py``'s layout (``seconds``, ``env_steps_per_s``). Run it under the benchmark
environment's ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` (set here if unset), as every JAX entry.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false")

import functools  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # benchmarks/
from floor import ReplayRows, run  # noqa: E402


def mlp_init(key, inputs: int, outputs: int, hidden: list) -> list:
    """torch.nn.Linear's initialisation: kernel and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    sizes, layers = [inputs, *hidden, outputs], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, kernel_key, bias_key = jax.random.split(key, 3)
        bound = 1 / math.sqrt(fan_in)
        layers.append(
            (
                jax.random.uniform(kernel_key, (fan_in, fan_out), minval=-bound, maxval=bound),
                jax.random.uniform(bias_key, (fan_out,), minval=-bound, maxval=bound),
            )
        )
    return layers


def mlp(layers: list, x):
    for kernel, bias in layers[:-1]:
        x = jax.nn.relu(x @ kernel + bias)
    kernel, bias = layers[-1]
    return x @ kernel + bias


def polyak(targets, sources, tau: float):
    return jax.tree_util.tree_map(lambda target, source: (1 - tau) * target + tau * source, targets, sources)


class Replay(ReplayRows):
    """NumPy replay arrays filled with plausible values; ``batch`` gathers ``batch_size`` random rows."""

    def __init__(self, rows: int, observation_size: int, seed: int, discrete_actions: int = 0):
        self.rows = rows
        self.rng = rng = np.random.default_rng(seed)
        self.states = rng.standard_normal((rows, observation_size), dtype=np.float32)
        self.next_states = rng.standard_normal((rows, observation_size), dtype=np.float32)
        if discrete_actions:
            self.actions = rng.integers(0, discrete_actions, (rows, 1))
        else:
            self.actions = rng.uniform(-2, 2, (rows, 1)).astype(np.float32)
        self.rewards = rng.standard_normal((rows, 1), dtype=np.float32)
        self.terminated = np.zeros((rows, 1), dtype=bool)

    def write(self, row: int, observations, rewards, terminated) -> None:
        """One env step's row (of one env), one write per array as a library's memory does."""
        self.states[row] = observations[0]
        self.rewards[row] = rewards[0]
        self.terminated[row] = terminated[0]

    def random_rows(self, batch_size: int):
        return self.rng.integers(0, self.rows, batch_size)


def sac_parts(hyper: dict, key, rng) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    keys = jax.random.split(key, 4)
    critics = [mlp_init(keys[1], 4, 1, hidden), mlp_init(keys[2], 4, 1, hidden)]
    params = {"policy": {"net": mlp_init(keys[0], 3, 1, hidden), "log_std": jnp.zeros(1)}, "critics": critics}
    optimizers = {
        "policy": optax.adam(cfg["actor_learning_rate"]),
        "critics": optax.adam(cfg["critic_learning_rate"]),
        "log_alpha": optax.adam(cfg["entropy_learning_rate"]),
    }
    state = {
        "params": params,
        "targets": critics,
        "log_alpha": jnp.zeros(1),
        "optimizers": {
            "policy": optimizers["policy"].init(params["policy"]),
            "critics": optimizers["critics"].init(critics),
            "log_alpha": optimizers["log_alpha"].init(jnp.zeros(1)),
        },
        "key": keys[3],
    }
    gamma, target_entropy = cfg["discount_factor"], -1.0

    def sample(policy, states, key):
        mean = 2 * jnp.tanh(mlp(policy["net"], states))
        std = jnp.exp(jnp.clip(policy["log_std"], -20, 2))
        actions = mean + std * jax.random.normal(key, mean.shape)
        log_prob = -((actions - mean) ** 2) / (2 * std**2) - jnp.log(std) - 0.5 * math.log(2 * math.pi)
        return actions, log_prob

    @jax.jit
    def act_fn(policy, states, key):
        key, sample_key = jax.random.split(key)
        return sample(policy, states, sample_key)[0], key

    @jax.jit
    def step_fn(state, states, actions, rewards, next_states, terminated):
        key, next_key, new_key = jax.random.split(state["key"], 3)
        params, alpha = state["params"], jnp.exp(state["log_alpha"])
        next_actions, next_log_prob = sample(params["policy"], next_states, next_key)
        pairs = jnp.concatenate([next_states, next_actions], 1)
        next_q = jnp.minimum(*(mlp(target, pairs) for target in state["targets"])) - alpha * next_log_prob
        y = jax.lax.stop_gradient(rewards + gamma * (1 - terminated) * next_q)

        def critic_loss(critics):
            pairs = jnp.concatenate([states, actions], 1)
            return sum(jnp.mean((mlp(critic, pairs) - y) ** 2) for critic in critics) / 2

        grads = jax.grad(critic_loss)(params["critics"])
        updates, critic_opt = optimizers["critics"].update(grads, state["optimizers"]["critics"])
        critics = optax.apply_updates(params["critics"], updates)

        def policy_loss(policy):
            new_actions, log_prob = sample(policy, states, new_key)
            pairs = jnp.concatenate([states, new_actions], 1)
            return jnp.mean(alpha * log_prob - jnp.minimum(*(mlp(critic, pairs) for critic in critics))), log_prob

        grads, log_prob = jax.grad(policy_loss, has_aux=True)(params["policy"])
        updates, policy_opt = optimizers["policy"].update(grads, state["optimizers"]["policy"])
        policy = optax.apply_updates(params["policy"], updates)
        alpha_grad = jax.grad(lambda a: -jnp.mean(a * jax.lax.stop_gradient(log_prob + target_entropy)))(
            state["log_alpha"]
        )
        updates, alpha_opt = optimizers["log_alpha"].update(alpha_grad, state["optimizers"]["log_alpha"])
        return {
            "params": {"policy": policy, "critics": critics},
            "targets": polyak(state["targets"], critics, cfg["polyak"]),
            "log_alpha": optax.apply_updates(state["log_alpha"], updates),
            "optimizers": {"policy": policy_opt, "critics": critic_opt, "log_alpha": alpha_opt},
            "key": key,
        }

    def act(states):
        actions, state["key"] = act_fn(state["params"]["policy"], states, state["key"])
        return np.asarray(actions)

    def gradient_step(step, batch):
        state.update(step_fn(state, *batch))

    return act, gradient_step, lambda: rng.uniform(-2, 2, (1, 1)).astype(np.float32)


def td3_parts(hyper: dict, key, rng) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    keys = jax.random.split(key, 3)
    policy, critics = (
        mlp_init(keys[0], 3, 1, hidden),
        [mlp_init(keys[1], 4, 1, hidden), mlp_init(keys[2], 4, 1, hidden)],
    )
    policy_optimizer, critic_optimizer = optax.adam(cfg["actor_learning_rate"]), optax.adam(cfg["critic_learning_rate"])
    state = {
        "policy": policy,
        "critics": critics,
        "target_policy": policy,
        "targets": critics,
        "policy_opt": policy_optimizer.init(policy),
        "critic_opt": critic_optimizer.init(critics),
    }
    gamma, clip = cfg["discount_factor"], cfg["smooth_regularization_clip"]

    act_fn = jax.jit(lambda policy, states: 2 * jnp.tanh(mlp(policy, states)))

    @jax.jit
    def critic_step(state, states, actions, rewards, next_states, terminated, noise):
        next_actions = 2 * jnp.tanh(mlp(state["target_policy"], next_states)) + jnp.clip(noise, -clip, clip)
        pairs = jnp.concatenate([next_states, jnp.clip(next_actions, -2, 2)], 1)
        y = rewards + gamma * (1 - terminated) * jnp.minimum(*(mlp(target, pairs) for target in state["targets"]))

        def loss(critics):
            pairs = jnp.concatenate([states, actions], 1)
            return sum(jnp.mean((mlp(critic, pairs) - y) ** 2) for critic in critics)

        updates, critic_opt = critic_optimizer.update(jax.grad(loss)(state["critics"]), state["critic_opt"])
        return {**state, "critics": optax.apply_updates(state["critics"], updates), "critic_opt": critic_opt}

    @jax.jit
    def policy_step(state, states):
        def loss(policy):
            pairs = jnp.concatenate([states, 2 * jnp.tanh(mlp(policy, states))], 1)
            return -jnp.mean(mlp(state["critics"][0], pairs))

        updates, policy_opt = policy_optimizer.update(jax.grad(loss)(state["policy"]), state["policy_opt"])
        policy = optax.apply_updates(state["policy"], updates)
        return {
            **state,
            "policy": policy,
            "policy_opt": policy_opt,
            "target_policy": polyak(state["target_policy"], policy, cfg["polyak"]),
            "targets": polyak(state["targets"], state["critics"], cfg["polyak"]),
        }

    def act(states):
        actions = np.asarray(act_fn(state["policy"], states))
        noise = hyper["exploration_noise_std"] * rng.standard_normal(actions.shape, dtype=np.float32)
        return np.clip(actions + noise, -2, 2)

    def gradient_step(step, batch):
        noise = hyper["smooth_noise_std"] * rng.standard_normal(batch[1].shape, dtype=np.float32)
        state.update(critic_step(state, *batch, noise))
        if step % cfg["policy_delay"] == 0:
            state.update(policy_step(state, batch[0]))

    return act, gradient_step, lambda: rng.uniform(-2, 2, (1, 1)).astype(np.float32)


def dqn_parts(hyper: dict, key, rng) -> tuple:
    cfg, hidden = hyper["cfg"], hyper["hidden"]
    q_network = mlp_init(key, 4, 2, hidden)
    optimizer = optax.adam(cfg["learning_rate"])
    state = {"q": q_network, "target": q_network, "opt": optimizer.init(q_network)}
    gamma, epsilon = cfg["discount_factor"], cfg["exploration"]["final_epsilon"]

    greedy = jax.jit(lambda q, states: jnp.argmax(mlp(q, states), -1, keepdims=True))

    @functools.partial(jax.jit, static_argnums=6)
    def step_fn(state, states, actions, rewards, next_states, terminated, copy_target):
        y = rewards + gamma * (1 - terminated) * jnp.max(mlp(state["target"], next_states), -1, keepdims=True)

        def loss(q):
            return jnp.mean((jnp.take_along_axis(mlp(q, states), actions, 1) - y) ** 2)

        updates, opt = optimizer.update(jax.grad(loss)(state["q"]), state["opt"])
        q = optax.apply_updates(state["q"], updates)
        return {"q": q, "target": q if copy_target else state["target"], "opt": opt}

    def act(states):
        if rng.random() < epsilon:
            return rng.integers(0, 2, (1, 1))
        return np.asarray(greedy(state["q"], states))

    def gradient_step(step, batch):
        state.update(step_fn(state, *batch, step % cfg["target_update_interval"] == 0))

    return act, gradient_step, lambda: rng.integers(0, 2, (1, 1))


def parts(algorithm: str, hyper: dict, seed: int, replay: Replay) -> tuple:
    """The algorithm's parts; host-side noise and decisions come from the replay's NumPy generator."""
    build = {"SAC": sac_parts, "TD3": td3_parts, "DQN": dqn_parts}[algorithm]
    return build(hyper, jax.random.PRNGKey(seed), replay.rng)


def main() -> None:
    run(__doc__, "plain JAX (floor)", "jax", jax.__version__, Replay, parts)


if __name__ == "__main__":
    main()
