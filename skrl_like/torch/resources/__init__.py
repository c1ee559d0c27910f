"""Resources: preprocessors, schedulers, noises."""
