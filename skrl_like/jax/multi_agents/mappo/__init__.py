from skrl_like.jax.multi_agents.mappo.mappo import MAPPO, MAPPO_DEFAULT_CONFIG

__all__ = ["MAPPO", "MAPPO_DEFAULT_CONFIG"]
