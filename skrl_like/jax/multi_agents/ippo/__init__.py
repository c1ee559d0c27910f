from skrl_like.jax.multi_agents.ippo.ippo import IPPO, IPPO_DEFAULT_CONFIG

__all__ = ["IPPO", "IPPO_DEFAULT_CONFIG"]
