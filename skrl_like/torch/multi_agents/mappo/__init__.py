from skrl_like.torch.multi_agents.mappo.mappo import MAPPO, MAPPO_DEFAULT_CONFIG

__all__ = ["MAPPO", "MAPPO_DEFAULT_CONFIG"]
