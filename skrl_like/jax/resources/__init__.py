"""Resources: preprocessors, schedulers, noises, optimizers."""
