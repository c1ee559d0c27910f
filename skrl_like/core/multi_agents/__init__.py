"""Backend-neutral halves of the multi-agent algorithms (IPPO, MAPPO)."""
