"""The environment machinery both backends share: NumPy-env wrapping, autoreset, tag detection, PettingZoo."""
