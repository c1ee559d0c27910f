"""Backend-neutral machinery shared by the torch and JAX backends (never imports either)."""
