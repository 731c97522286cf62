"""MNIST / Fashion-MNIST CNN training benchmark (Flax and PyTorch)."""
