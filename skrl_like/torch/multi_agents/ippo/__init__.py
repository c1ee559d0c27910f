from skrl_like.torch.multi_agents.ippo.ippo import IPPO, IPPO_DEFAULT_CONFIG

__all__ = ["IPPO", "IPPO_DEFAULT_CONFIG"]
