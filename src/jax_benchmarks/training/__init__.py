"""Training the CNN on MNIST, shared by the groups that train it: the model (`model_spec`, the Flax and PyTorch
trainers), the data pipeline (`data`), the training settings and the training cases. No group owns it: `mnist`
builds its commands on it, `jit flax` trains the same model jitted and not, `autograd` takes the gradient of it."""
