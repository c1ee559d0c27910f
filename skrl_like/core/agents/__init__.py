"""The neutral half of every agent: the base class, config checks and the update cadence."""
