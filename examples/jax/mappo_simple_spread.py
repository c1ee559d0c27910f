"""Train MAPPO (a centralised critic on the environment's state) on PettingZoo MPE simple_spread_v3 with the jax
backend: the IPPO example's script and hyperparameters with the value models on env.state_spaces.

Run: python examples/jax/mappo_simple_spread.py [--timesteps 300000] [--seed 42]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ippo_simple_spread import main  # noqa: E402

if __name__ == "__main__":
    sys.argv.append("--mappo")
    main()
